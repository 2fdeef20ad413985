#!/usr/bin/env bash
# Regenerates the code of chapter 13-generated from the Go types in
# apis/course/v1alpha1: DeepCopy methods, then a typed clientset, listers
# and informers, under generated/.
#
# It runs the generators that k8s.io/code-generator v0.37.2's
# kube_codegen.sh runs, with the flags it passes them
# (kube::codegen::gen_helpers, deepcopy-gen only: the types need no
# defaults, validations or conversions; and kube::codegen::gen_client
# --with-watch, no apply configurations), but through `go tool`: the
# generators are pinned by the tool directive in the course's go.mod, so
# they are built from the module cache and the script works offline.
# kube_codegen.sh instead `go install`s them from the code-generator
# module, which needs the network on a cold cache.
#
# Run it from anywhere; it works on the module it lives in.
set -o errexit -o nounset -o pipefail

chapter="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
root="$(cd "${chapter}/.." && pwd -P)"
cd "${root}"
module="$(go list -m)"
pkg="${module}/13-generated"
header="${chapter}/hack/boilerplate.go.txt"
out="${chapter}/generated"

# As kube_codegen.sh does, remove what the generators wrote before, so
# that a type removed leaves no file behind.
rm -f "${chapter}"/apis/course/v1alpha1/zz_generated.deepcopy.go
rm -rf "${out}"

# gen_helpers: DeepCopy, DeepCopyInto and DeepCopyObject.
go tool deepcopy-gen \
    --output-file zz_generated.deepcopy.go \
    --go-header-file "${header}" \
    "${pkg}/apis/course/v1alpha1"

# gen_client: the clientset (with its fake), ...
go tool client-gen \
    --go-header-file "${header}" \
    --output-dir "${out}/clientset" \
    --output-pkg "${pkg}/generated/clientset" \
    --clientset-name versioned \
    --apply-configuration-package "" \
    --input-base "${chapter}/apis" \
    --plural-exceptions "" \
    --prefers-protobuf=false \
    --input course/v1alpha1

# ... the listers (--with-watch) ...
go tool lister-gen \
    --go-header-file "${header}" \
    --output-dir "${out}/listers" \
    --output-pkg "${pkg}/generated/listers" \
    --plural-exceptions "" \
    "${pkg}/apis/course/v1alpha1"

# ... and the informers with their shared factory.
go tool informer-gen \
    --go-header-file "${header}" \
    --output-dir "${out}/informers" \
    --output-pkg "${pkg}/generated/informers" \
    --versioned-clientset-package "${pkg}/generated/clientset/versioned" \
    --listers-package "${pkg}/generated/listers" \
    --plural-exceptions "" \
    "${pkg}/apis/course/v1alpha1"
