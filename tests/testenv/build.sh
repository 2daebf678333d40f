#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok) from the Go module proxy, or reuses an earlier build,
# and prints the bin directory on stdout (progress goes to stderr).
#
# Binaries are cached outside the clone, keyed by a hash of everything that decides
# them (this script, the shared ../go-build-cache.sh, both go.mod/go.sum pairs, the Go
# version and platform):
#   ${PHASESCALE_TESTENV_CACHE:-$HOME/.cache/phasescale-testenv}/<key>/bin
# A second run with the same key is instant. Concurrent runs wait on a lock.
#
# Environment: PHASESCALE_TESTENV_CACHE (cache root), GOFLAGS (e.g. -p=1 on a
# busy machine; the go command's own defaults otherwise), GOTOOLCHAIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-cache.sh
source "$here/../go-build-cache.sh"
cache_root=${PHASESCALE_TESTENV_CACHE:-${HOME:-/root}/.cache/phasescale-testenv}

die() { echo "testenv/build.sh: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on the PATH"

# Versions, for the version strings stamped into the binaries (the go.mod files
# are what actually pins them).
kube_version=$(go_module_version "$here/go.mod" k8s.io/kubernetes)
[[ -n $kube_version ]] || die "no k8s.io/kubernetes version in go.mod"
kube_minor=$(echo "$kube_version" | cut -d. -f2)

build() {  # build TMP: all six binaries into TMP
    local out=$1 pkg ver_ldflags="" b
    export CGO_ENABLED=0
    # Version strings as the Kubernetes release build sets them, so /version and
    # `kubectl version` report the real release instead of v0.0.0-master.
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ver_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
        ver_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    done
    echo "testenv/build.sh: Kubernetes $kube_version: etcd, kube-apiserver," \
        "kube-controller-manager, kube-scheduler, kubectl ..." >&2
    (cd "$here" && go build -trimpath -ldflags="-s -w $ver_ldflags" -o "$out/" tool)
    # go.etcd.io/etcd/server/v3 is etcd's main package; go names its binary "server".
    mv "$out/server" "$out/etcd"
    echo "testenv/build.sh: kwok ..." >&2
    (cd "$here/kwok" && go build -trimpath -ldflags="-s -w" -o "$out/" tool)
    for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
        [[ -x $out/$b ]] || die "$b was not built"
    done
    echo "$kube_version" >"$out/.kube-version"
}

key=$(go_cache_key "$here/build.sh" "$here/../go-build-cache.sh" "$here/go.mod" "$here/go.sum" \
    "$here/kwok/go.mod" "$here/kwok/go.sum")
go_cache_build testenv/build.sh "$cache_root/$key" build
