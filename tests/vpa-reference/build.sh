#!/usr/bin/env bash
# Builds the VPA reference harness (main.go against k8s.io/autoscaler/vertical-pod-autoscaler,
# the version go.mod pins) from the Go module proxy, or reuses an earlier build, and prints the
# path of the binary on stdout (progress goes to stderr). The same pattern as
# tests/testenv/build.sh and tests/helm/build.sh, with a cache of its own.
#
# The binary is cached outside the clone, keyed by the VPA version and a hash of everything
# that decides it (this script, go.mod, go.sum, the Go sources, the Go version and platform):
#   ${PHASESCALE_VPA_REFERENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/phasescale-vpa-reference}/<vpa version>-<key>/bin/vpa-reference
# A second run with the same key is instant. Concurrent runs wait on a lock.
#
# Environment: PHASESCALE_VPA_REFERENCE_CACHE (cache root), GOFLAGS (e.g. -p=1 on a busy
# machine), GOTOOLCHAIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PHASESCALE_VPA_REFERENCE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/phasescale-vpa-reference}

command -v go >/dev/null || { echo "vpa-reference/build.sh: go is not on the PATH" >&2; exit 1; }

# The version go.mod requires (a `require` line of its own, or a line of a require block).
vpa_version=$(awk '{ if ($1 == "require") { $1 = ""; $0 = $0 } }
    $1 == "k8s.io/autoscaler/vertical-pod-autoscaler" && $2 ~ /^v/ {print $2}' "$here/go.mod")
[[ -n $vpa_version ]] || { echo "vpa-reference/build.sh: no k8s.io/autoscaler/vertical-pod-autoscaler version in go.mod" >&2; exit 1; }

key=$( {
    cat "$here/build.sh" "$here/go.mod" "$here/go.sum" "$here"/*.go
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -c1-16)
dir=$cache_root/$vpa_version-$key
bin=$dir/bin

if [[ -f $bin/.complete ]]; then
    echo "$bin/vpa-reference"
    exit 0
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [[ -f $bin/.complete ]]; then   # another run finished it while we waited
    echo "$bin/vpa-reference"
    exit 0
fi

tmp=$(mktemp -d "$dir/bin.tmp.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
echo "vpa-reference/build.sh: building the VPA reference harness (VPA $vpa_version) into $bin" >&2
(
    cd "$here"
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$tmp/vpa-reference" .
)
[[ -x $tmp/vpa-reference ]] || { echo "vpa-reference/build.sh: vpa-reference was not built" >&2; exit 1; }
echo "$vpa_version" >"$tmp/.vpa-version"
touch "$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
echo "vpa-reference/build.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$bin/vpa-reference"
