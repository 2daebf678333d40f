# shellcheck shell=bash
# Shared by the build scripts that build Go programs from the module proxy into a cache outside
# the clone (the build.sh of tests/testenv, tests/helm, tests/vpa-reference and tests/vpa-live):
# source it, then call go_cache_key, and go_cache_build with a function that builds into a folder.

# go_module_version GO_MOD MODULE: the version GO_MOD requires of MODULE (a `require` line of
# its own, or a line of a require block); empty if none.
go_module_version() {
    awk -v m="$2" '{ if ($1 == "require") { $1 = ""; $0 = $0 } }
        $1 == m && $2 ~ /^v/ {print $2}' "$1"
}

# go_cache_key FILE...: 16 hex digits of a hash of the files, the Go version and the platform.
go_cache_key() {
    { cat "$@"; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -c1-16
}

# go_cache_build NAME DIR BUILD_FUNCTION [FILE]: makes DIR/bin with BUILD_FUNCTION TMP (which
# builds into the empty folder TMP) unless DIR/bin is already complete, and prints DIR/bin, or
# DIR/bin/FILE when FILE is given. Callers that race wait on a lock (DIR/.lock); a failed build
# leaves no DIR/bin behind. NAME prefixes progress messages (on stderr). Call it as a command of
# its own under `set -e` (not in a condition or a $(...)), so that a failing step stops the build.
go_cache_build() {
    local name=$1 dir=$2 build=$3 bin=$2/bin out=$2/bin${4:+/$4} tmp start
    if [[ -f $bin/.complete ]]; then
        echo "$out"
        return 0
    fi
    mkdir -p "$dir"
    exec 9>"$dir/.lock"
    flock 9
    if [[ -f $bin/.complete ]]; then   # another run finished it while we waited
        exec 9>&-
        echo "$out"
        return 0
    fi
    tmp=$(mktemp -d "$dir/bin.tmp.XXXXXX")
    chmod 755 "$tmp"
    # shellcheck disable=SC2064 # expand $tmp now
    trap "rm -rf '$tmp'" EXIT
    start=$(date +%s)
    echo "$name: building into $bin" >&2
    "$build" "$tmp"
    touch "$tmp/.complete"
    rm -rf "$bin"
    mv "$tmp" "$bin"
    trap - EXIT
    exec 9>&-
    echo "$name: built in $(($(date +%s) - start)) s" >&2
    echo "$out"
}
