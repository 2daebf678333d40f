#!/usr/bin/env bash
# Checks of the Dockerfile that need no docker daemon (none is on the development machines):
#   - every shared library that `ldd` finds for the built phasescale and phasescale-operator
#     comes from a Debian package that the runtime stage installs, or from one of their
#     dependencies (apt-cache depends --recurse), so the image runs what the build made;
#   - the build stage runs the CI build script, the runtime stage is bookworm-slim, runs as a
#     numeric non-root user and copies only the two binaries and the default model (from the
#     build stage, or from the binaries scripts/build-image.sh --binaries hands it);
#   - every path the Dockerfile copies from the context exists and is not in .dockerignore.
# Usage: check-dockerfile.sh SOURCE_DIR PHASESCALE PHASESCALE_OPERATOR
set -euo pipefail
root=$1 cli=$2 operator=$3
dockerfile=$root/Dockerfile
failures=0 passed=0
check() {  # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; passed=$((passed + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

# The runtime packages: the lines between the BEGIN/END markers that name a package.
runtime_packages=$(sed -n '/^# BEGIN runtime packages/,/^# END runtime packages/p' "$dockerfile" |
    grep -E '^\s+[a-z0-9][a-z0-9.+-]+ \\$' | awk '{print $1}' | sort -u)
check "the runtime stage installs packages" test -n "$runtime_packages"
echo "runtime packages: $(echo $runtime_packages)"

# Their closure over Depends and Pre-Depends.
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances $runtime_packages 2>/dev/null | grep -v '^ ' | sed 's/:.*//' | sort -u)
check "apt-cache knows the runtime packages (apt-get update first)" \
    bash -c "for p in $(echo $runtime_packages); do grep -qx \"\$p\" <<< '$closure' || exit 1; done"

# package_of LIB: the Debian package that ships a library file (usrmerge: /lib is /usr/lib).
package_of() {
    local f=$1 p
    for cand in "$f" "/usr$f" "$(readlink -f "$f")" "/usr$(readlink -f "$f")"; do
        p=$(dpkg -S "$cand" 2>/dev/null | head -n 1 | cut -d: -f1) || true
        [[ -n $p ]] && { echo "$p"; return 0; }
    done
    return 1
}
libs_ok() {
    local bin=$1 lib pkg bad=0
    if ldd "$bin" | grep -q 'not found'; then
        echo "  $bin: $(ldd "$bin" | grep 'not found')"; return 1
    fi
    while read -r lib; do
        if ! pkg=$(package_of "$lib"); then
            echo "  $(basename "$bin"): $lib belongs to no Debian package"; bad=1; continue
        fi
        if ! grep -qx "$pkg" <<< "$closure"; then
            echo "  $(basename "$bin"): $lib is in $pkg, which the runtime stage does not install"; bad=1
        else
            echo "  $(basename "$bin"): $lib <- $pkg"
        fi
    done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
    return $bad
}
check "every library of phasescale-operator is in an installed runtime package" libs_ok "$operator"
check "every library of phasescale is in an installed runtime package" libs_ok "$cli"

# Structure.
stages=$(grep -E '^FROM ' "$dockerfile" | awk '{print $NF}' | tr '\n' ' ')
check "three stages: build, binaries (the build stage or built binaries), runtime" \
    test "$stages" == "build binaries runtime "
check "binaries is the build stage unless --build-arg BINARIES says otherwise" bash -c \
    "grep -qx 'ARG BINARIES=build' '$dockerfile' && grep -qx 'FROM \${BINARIES} AS binaries' '$dockerfile'"
check "build image defaults to debian:bookworm" grep -qx 'ARG BUILD_IMAGE=debian:bookworm' "$dockerfile"
check "runtime image defaults to debian:bookworm-slim" grep -qx 'ARG RUNTIME_IMAGE=debian:bookworm-slim' "$dockerfile"
check "the build stage runs scripts/build.sh (as CI does)" grep -qE 'bash scripts/build\.sh' "$dockerfile"
runtime_stage=$(sed -n '/ AS runtime$/,$p' "$dockerfile")
check "the runtime stage runs as a numeric non-root user" \
    bash -c "grep -E '^USER [0-9]+(:[0-9]+)?\$' <<< '$runtime_stage' | grep -qvE '^USER 0(:|\$)'"
check "the USER line is the last one that changes the user" \
    test "$(grep -E '^USER ' <<< "$runtime_stage" | wc -l)" == 1
check "the runtime stage copies only /out from the binaries stage" \
    test "$(grep -E '^COPY ' <<< "$runtime_stage")" == "COPY --from=binaries /out/ /"
check "/out holds the two binaries and the default model" bash -c \
    "grep -q 'install -m 0755 -s build/cli/phasescale build/operator/phasescale-operator /out/usr/local/bin/' '$dockerfile' &&
     grep -q 'install -m 0644 model/pretrained/default.model.json /out/usr/share/phasescale/' '$dockerfile'"
check "the default model exists" test -s "$root/model/pretrained/default.model.json"
check "no package cache left in the runtime layer" bash -c "grep -q 'rm -rf /var/lib/apt/lists/\*' <<< '$runtime_stage'"
check "apt-get install without recommends" bash -c "! grep -E 'apt-get install' '$dockerfile' | grep -v -- '--no-install-recommends' | grep -q ."

# The build context: what the build stage needs is not ignored.
ignored() {  # ignored PATH: .dockerignore excludes it (the simple patterns used there)
    local path=$1 pattern
    while read -r pattern; do
        [[ -z $pattern || $pattern == \#* ]] && continue
        pattern=${pattern#/}; pattern=${pattern%/}
        # shellcheck disable=SC2053 # glob match is the point
        [[ $path == $pattern || $path == $pattern/* ]] && return 0
    done < "$root/.dockerignore"
    return 1
}
needed_ok() {
    local bad=0 p
    for p in CMakeLists.txt cmake scripts/build.sh scripts/install-deps.sh model policy sim operator cli \
             tools/replay-exporter tests/CMakeLists.txt bench/CMakeLists.txt model/pretrained/default.model.json; do
        [[ -e $root/$p ]] || { echo "  $p does not exist"; bad=1; continue; }
        ! ignored "$p" || { echo "  $p is in .dockerignore"; bad=1; }
    done
    for p in .git build build-helm out; do
        ignored "$p" || { echo "  $p is not in .dockerignore"; bad=1; }
    done
    return $bad
}
check ".dockerignore keeps the sources and drops build output and .git" needed_ok

echo "dockerfile: $passed passed, $failures failed"
[[ $failures == 0 ]]
