#!/usr/bin/env bash
# Rebuild the binaries in ./bin from the scratch modules ./build and ./etcd.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
V=k8s.io/component-base/version
LDF="-X $V.gitVersion=v1.37.2 -X $V.gitMajor=1 -X $V.gitMinor=37 -X $V.gitTreeState=clean -X $V.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
P=${P:-2}
mkdir -p "$HERE/bin"
cd "$HERE/build"
for c in kube-apiserver kube-controller-manager; do
  nice -n 10 go build -p "$P" -trimpath -ldflags "$LDF" -o "$HERE/bin/$c" "k8s.io/kubernetes/cmd/$c"
done
cd "$HERE/etcd"
nice -n 10 go build -p "$P" -trimpath -o "$HERE/bin/etcd" .
