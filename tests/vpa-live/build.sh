#!/usr/bin/env bash
# Builds the live VPA (recommender, updater, admission-controller of
# k8s.io/autoscaler/vertical-pod-autoscaler) and metrics-server (sigs.k8s.io/metrics-server),
# the versions go.mod and metrics-server/go.mod pin, from the Go module proxy, or reuses an
# earlier build, and prints the bin directory on stdout (progress goes to stderr). The same
# pattern as tests/testenv/build.sh and tests/vpa-reference/build.sh, with a cache of its own.
#
# The binaries are cached outside the clone, keyed by the versions and a hash of everything
# that decides them (this script, the shared ../go-build-cache.sh, both go.mod/go.sum pairs,
# the Go version and platform):
#   ${PHASESCALE_VPA_LIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/phasescale-vpa-live}/vpa-<version>-metrics-server-<version>-<key>/bin
# A second run with the same key is instant. Concurrent runs wait on a lock.
#
# Environment: PHASESCALE_VPA_LIVE_CACHE (cache root), GOFLAGS (e.g. -p=1 on a busy machine),
# GOTOOLCHAIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-cache.sh
source "$here/../go-build-cache.sh"
cache_root=${PHASESCALE_VPA_LIVE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/phasescale-vpa-live}

die() { echo "vpa-live/build.sh: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on the PATH"

vpa_version=$(go_module_version "$here/go.mod" k8s.io/autoscaler/vertical-pod-autoscaler)
ms_version=$(go_module_version "$here/metrics-server/go.mod" sigs.k8s.io/metrics-server)
[[ -n $vpa_version ]] || die "no k8s.io/autoscaler/vertical-pod-autoscaler version in go.mod"
[[ -n $ms_version ]] || die "no sigs.k8s.io/metrics-server version in metrics-server/go.mod"

build() {  # build TMP: all four binaries into TMP
    local out=$1
    export CGO_ENABLED=0
    echo "vpa-live/build.sh: VPA $vpa_version: recommender, updater, admission-controller ..." >&2
    # The VPA's version is a constant in its source (common.versionCore); its release build
    # adds only the git commit, which a module download does not have.
    (cd "$here" && go build -trimpath -ldflags="-s -w" -o "$out/" tool)
    echo "vpa-live/build.sh: metrics-server $ms_version ..." >&2
    # metrics-server's Makefile stamps its version into client-go's version package.
    local pkg=k8s.io/client-go/pkg/version
    (cd "$here/metrics-server" && go build -trimpath -o "$out/" \
        -ldflags="-s -w -X $pkg.gitVersion=$ms_version -X $pkg.buildDate=1970-01-01T00:00:00Z" tool)
    # The VPA's CRDs, of the same version (start.sh installs them).
    cp "$(cd "$here" && go list -m -f '{{.Dir}}' k8s.io/autoscaler/vertical-pod-autoscaler)/deploy/vpa-v1-crd-gen.yaml" \
        "$out/"
    local b
    for b in recommender updater admission-controller metrics-server vpa-v1-crd-gen.yaml; do
        [[ -s $out/$b ]] || die "$b was not built"
    done
    echo "vpa $vpa_version metrics-server $ms_version" >"$out/.versions"
}

key=$(go_cache_key "$here/build.sh" "$here/../go-build-cache.sh" "$here/go.mod" "$here/go.sum" \
    "$here/metrics-server/go.mod" "$here/metrics-server/go.sum")
go_cache_build vpa-live/build.sh "$cache_root/vpa-$vpa_version-metrics-server-$ms_version-$key" build
