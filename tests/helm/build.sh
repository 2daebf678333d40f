#!/usr/bin/env bash
# Builds Helm (helm.sh/helm/v3, cmd/helm, the version go.mod pins) from the Go module proxy,
# or reuses an earlier build, and prints the path of the helm binary on stdout (progress goes
# to stderr). The same pattern as tests/testenv/build.sh, with a cache of its own.
#
# The binary is cached outside the clone, keyed by a hash of everything that decides it
# (this script, go.mod, go.sum, the Go version and platform):
#   ${PHASESCALE_HELM_CACHE:-$HOME/.cache/phasescale-helm}/<key>/bin/helm
# A second run with the same key is instant. Concurrent runs wait on a lock.
#
# Environment: PHASESCALE_HELM_CACHE (cache root), GOFLAGS (e.g. -p=1 on a busy machine),
# GOTOOLCHAIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PHASESCALE_HELM_CACHE:-${HOME:-/root}/.cache/phasescale-helm}

command -v go >/dev/null || { echo "helm/build.sh: go is not on the PATH" >&2; exit 1; }

helm_version=$(awk '$1 == "helm.sh/helm/v3" && $2 ~ /^v/ {print $2}' "$here/go.mod")
[[ -n $helm_version ]] || { echo "helm/build.sh: no helm.sh/helm/v3 version in go.mod" >&2; exit 1; }

key=$( {
    cat "$here/build.sh" "$here/go.mod" "$here/go.sum"
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -c1-16)
dir=$cache_root/$key
bin=$dir/bin

if [[ -f $bin/.complete ]]; then
    echo "$bin/helm"
    exit 0
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [[ -f $bin/.complete ]]; then   # another run finished it while we waited
    echo "$bin/helm"
    exit 0
fi

tmp=$(mktemp -d "$dir/bin.tmp.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
echo "helm/build.sh: building helm $helm_version into $bin" >&2
(
    cd "$here"
    # The version string as Helm's release build sets it (`helm version` would say v3.x-dev).
    CGO_ENABLED=0 go build -trimpath \
        -ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
        -o "$tmp/helm" helm.sh/helm/v3/cmd/helm
)
[[ -x $tmp/helm ]] || { echo "helm/build.sh: helm was not built" >&2; exit 1; }
"$tmp/helm" version --short >&2
touch "$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
echo "helm/build.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$bin/helm"
