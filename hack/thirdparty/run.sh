#!/usr/bin/env bash
# Run an envtest suite that someone else wrote against a fresh workshop cluster,
# as envtest users point a suite at an existing cluster:
#
#   hack/thirdparty/run.sh DIR [go test args...]     (default args: ./...)
#
# DIR is the suite's module (its own go.mod; this script fetches and changes
# nothing in it). The script builds cmd/workshop-cluster, starts it on a free
# port on 127.0.0.1, runs `go test -p 1 -count=1 ARGS` in DIR with
# USE_EXISTING_CLUSTER=true and KUBECONFIG naming the cluster's kubeconfig
# (envtest then installs the suite's CRDDirectoryPaths through the API), stops
# the cluster and exits with go test's status. -p 1: a suite's packages share
# the one cluster, as they share envtest's only when run one at a time.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DIR [go test args...]" >&2; exit 2; }
SUITE=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: $1: no such directory" >&2; exit 2; }
[ -f "$SUITE/go.mod" ] || { echo "$0: $SUITE has no go.mod" >&2; exit 2; }
shift
[ $# -gt 0 ] || set -- ./...
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
PID=
stop() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID"; wait "$PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap stop EXIT
(cd "$ROOT" && go build -o "$TMP/workshop-cluster" ./cmd/workshop-cluster)
ms() { date +%s%3N; }
t0=$(ms)
"$TMP/workshop-cluster" --kubeconfig-out "$TMP/kubeconfig" >"$TMP/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 200); do
  [ -s "$TMP/kubeconfig" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$TMP/server.log" >&2; echo "$0: the workshop cluster exited" >&2; exit 1; }
  sleep 0.05
done
[ -s "$TMP/kubeconfig" ] || { echo "$0: the workshop cluster wrote no kubeconfig in 10 s" >&2; exit 1; }
t1=$(ms)
echo "workshop cluster up in $((t1 - t0)) ms: $(head -1 "$TMP/server.log")"
status=0
(cd "$SUITE" && USE_EXISTING_CLUSTER=true KUBECONFIG="$TMP/kubeconfig" go test -p 1 -count=1 "$@") || status=$?
t2=$(ms)
echo "go test in $SUITE: exit $status in $((t2 - t1)) ms (build included)"
exit $status
