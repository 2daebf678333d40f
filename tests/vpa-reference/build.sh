#!/usr/bin/env bash
# Builds the VPA reference harness (main.go against k8s.io/autoscaler/vertical-pod-autoscaler,
# the version go.mod pins) from the Go module proxy, or reuses an earlier build, and prints the
# path of the binary on stdout (progress goes to stderr). The same pattern as
# tests/testenv/build.sh and tests/helm/build.sh, with a cache of its own.
#
# The binary is cached outside the clone, keyed by the VPA version and a hash of everything
# that decides it (this script, the shared ../go-build-cache.sh, go.mod, go.sum, the Go
# sources, the Go version and platform):
#   ${PHASESCALE_VPA_REFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/phasescale-vpa-reference}/<vpa version>-<key>/bin/vpa-reference
# A second run with the same key is instant. Concurrent runs wait on a lock.
#
# Environment: PHASESCALE_VPA_REFERENCE_CACHE (cache root), GOFLAGS (e.g. -p=1 on a busy
# machine), GOTOOLCHAIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-cache.sh
source "$here/../go-build-cache.sh"
cache_root=${PHASESCALE_VPA_REFERENCE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/phasescale-vpa-reference}

die() { echo "vpa-reference/build.sh: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on the PATH"

vpa_version=$(go_module_version "$here/go.mod" k8s.io/autoscaler/vertical-pod-autoscaler)
[[ -n $vpa_version ]] || die "no k8s.io/autoscaler/vertical-pod-autoscaler version in go.mod"

build() {  # build TMP: the harness into TMP
    local out=$1
    echo "vpa-reference/build.sh: the VPA reference harness (VPA $vpa_version) ..." >&2
    (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$out/vpa-reference" .)
    [[ -x $out/vpa-reference ]] || die "vpa-reference was not built"
    echo "$vpa_version" >"$out/.vpa-version"
}

key=$(go_cache_key "$here/build.sh" "$here/../go-build-cache.sh" "$here/go.mod" "$here/go.sum" \
    "$here"/*.go)
go_cache_build vpa-reference/build.sh "$cache_root/$vpa_version-$key" build vpa-reference
