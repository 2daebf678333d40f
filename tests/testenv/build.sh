#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok) from the Go module proxy, or reuses an earlier build,
# and prints the bin directory on stdout (progress goes to stderr).
#
# Binaries are cached outside the clone, keyed by a hash of everything that decides
# them (this script, both go.mod/go.sum pairs, the Go version and platform):
#   ${PHASESCALE_TESTENV_CACHE:-$HOME/.cache/phasescale-testenv}/<key>/bin
# A second run with the same key is instant. Concurrent runs wait on a lock.
#
# Environment: PHASESCALE_TESTENV_CACHE (cache root), GOFLAGS (e.g. -p=1 on a
# busy machine; the go command's own defaults otherwise), GOTOOLCHAIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PHASESCALE_TESTENV_CACHE:-${HOME:-/root}/.cache/phasescale-testenv}

command -v go >/dev/null || { echo "build.sh: go is not on the PATH" >&2; exit 1; }

# Versions, for the version strings stamped into the binaries (the go.mod files
# are what actually pins them).
kube_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2}' "$here/go.mod")
[[ -n $kube_version ]] || { echo "build.sh: no k8s.io/kubernetes version in go.mod" >&2; exit 1; }
kube_minor=$(echo "$kube_version" | cut -d. -f2)

key=$( {
    cat "$here/build.sh" "$here/go.mod" "$here/go.sum" "$here/kwok/go.mod" "$here/kwok/go.sum"
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -c1-16)
dir=$cache_root/$key
bin=$dir/bin

if [[ -f $bin/.complete ]]; then
    echo "$bin"
    exit 0
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [[ -f $bin/.complete ]]; then   # another run finished it while we waited
    echo "$bin"
    exit 0
fi

tmp=$(mktemp -d "$dir/bin.tmp.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
echo "build.sh: building the test control plane (Kubernetes $kube_version) into $bin" >&2

export CGO_ENABLED=0
# Version strings as the Kubernetes release build sets them, so /version and
# `kubectl version` report the real release instead of v0.0.0-master.
ver_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ver_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
    ver_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

(
    cd "$here"
    echo "build.sh: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl ..." >&2
    go build -trimpath -ldflags="-s -w $ver_ldflags" -o "$tmp/" tool
)
# go.etcd.io/etcd/server/v3 is etcd's main package; go names its binary "server".
mv "$tmp/server" "$tmp/etcd"
(
    cd "$here/kwok"
    echo "build.sh: kwok ..." >&2
    go build -trimpath -ldflags="-s -w" -o "$tmp/" tool
)

for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
    [[ -x $tmp/$b ]] || { echo "build.sh: $b was not built" >&2; exit 1; }
done
echo "$kube_version" >"$tmp/.kube-version"
touch "$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
echo "build.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"
