#!/usr/bin/env bash
# Builds Helm (helm.sh/helm/v3, cmd/helm, the version go.mod pins) from the Go module proxy,
# or reuses an earlier build, and prints the path of the helm binary on stdout (progress goes
# to stderr). The same pattern as tests/testenv/build.sh, with a cache of its own.
#
# The binary is cached outside the clone, keyed by a hash of everything that decides it
# (this script, the shared ../go-build-cache.sh, go.mod, go.sum, the Go version and platform):
#   ${PHASESCALE_HELM_CACHE:-$HOME/.cache/phasescale-helm}/<key>/bin/helm
# A second run with the same key is instant. Concurrent runs wait on a lock.
#
# Environment: PHASESCALE_HELM_CACHE (cache root), GOFLAGS (e.g. -p=1 on a busy machine),
# GOTOOLCHAIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-cache.sh
source "$here/../go-build-cache.sh"
cache_root=${PHASESCALE_HELM_CACHE:-${HOME:-/root}/.cache/phasescale-helm}

die() { echo "helm/build.sh: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on the PATH"

helm_version=$(go_module_version "$here/go.mod" helm.sh/helm/v3)
[[ -n $helm_version ]] || die "no helm.sh/helm/v3 version in go.mod"

build() {  # build TMP: helm into TMP
    local out=$1 pkg=helm.sh/helm/v3/internal/version
    echo "helm/build.sh: helm $helm_version ..." >&2
    # The version string as Helm's release build sets it (`helm version` would say v3.x-dev).
    (cd "$here" && CGO_ENABLED=0 go build -trimpath \
        -ldflags="-s -w -X $pkg.version=$helm_version -X $pkg.gitTreeState=clean" \
        -o "$out/helm" helm.sh/helm/v3/cmd/helm)
    [[ -x $out/helm ]] || die "helm was not built"
    "$out/helm" version --short >&2
}

key=$(go_cache_key "$here/build.sh" "$here/../go-build-cache.sh" "$here/go.mod" "$here/go.sum")
go_cache_build helm/build.sh "$cache_root/$key" build helm
