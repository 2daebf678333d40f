#!/usr/bin/env bash
# Builds the phasescale image from the Dockerfile with buildah, without a daemon or a registry
# (docs/image.md). Run as root.
#
#   bash scripts/build-image.sh                      # full multi-stage build from the sources
#   bash scripts/build-image.sh --binaries build     # only the runtime stage, from built binaries
#   bash scripts/build-image.sh --base               # only the base images; prints their names
#
# The Dockerfile's base images (debian:bookworm, debian:bookworm-slim) are made here with
# debootstrap from Debian's archive and imported as local images, cached outside the clone in
#   ${PHASESCALE_IMAGE_CACHE:-$HOME/.cache/phasescale-image}/<key>/
# keyed by a hash of what decides them (suite, mirrors, debootstrap's arguments and the functions
# below that make them). A second run with the same key reuses them. buildah runs with
# `--isolation chroot` and `--storage-driver vfs`, which need neither a daemon nor overlay mounts.
#
# --binaries DIR (fast mode, for CI): the runtime stage alone, with DIR/cli/phasescale,
# DIR/operator/phasescale-operator (as scripts/build.sh builds them) and the default model in
# place of the build stage's /out; the same Dockerfile, through its BINARIES argument.
#
# Options: --tag NAME (default localhost/phasescale:dev), --jobs N (the build stage's compiler
# jobs, default $PHASESCALE_JOBS). The image's name is printed on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

suite=bookworm
mirror=http://deb.debian.org/debian
security_mirror=http://deb.debian.org/debian-security
# minbase: essential packages and apt, as Debian's own container images.
debootstrap_args=(--variant=minbase)

tag=localhost/phasescale:dev
binaries=""
base_only=0
jobs=${PHASESCALE_JOBS:-}
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --binaries) binaries=${2:?--binaries needs a build directory}; shift 2 ;;
        --tag) tag=${2:?--tag needs a name}; shift 2 ;;
        --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
        --base) base_only=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "build-image.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ $(id -u) -eq 0 ]] || { echo "build-image.sh: run as root (buildah, debootstrap)" >&2; exit 1; }
bash scripts/install-deps.sh buildah debootstrap >&2  # nothing to do once they are installed

b() { buildah --storage-driver vfs "$@"; }
log() { echo "build-image.sh: $*" >&2; }

# apt as in Debian's own images: the release, its updates and security as sources; no package
# cache or downloaded package left after apt-get (docker-clean), no translations.
configure_apt() {  # configure_apt ROOTFS
    local clean='"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"'
    cat > "$1/etc/apt/apt.conf.d/docker-clean" <<EOF
DPkg::Post-Invoke { $clean; };
APT::Update::Post-Invoke { $clean; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    echo 'Acquire::Languages "none";' > "$1/etc/apt/apt.conf.d/docker-no-languages"
    echo 'Apt::AutoRemove::SuggestsImportant "false";' > "$1/etc/apt/apt.conf.d/docker-autoremove-suggests"
    rm -f "$1/etc/apt/sources.list"
    cat > "$1/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

# What Debian's -slim images leave out: documentation, manual pages, translations; dpkg keeps
# leaving them out of packages installed later.
slimify() {  # slimify ROOTFS
    cat > "$1/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/man/*
EOF
    find "$1/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$1/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$1"/usr/share/{groff,info,linda,lintian,man}/*
    find "$1/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
}

# debootstrap into a temporary directory, then one tarball per image in the cache.
make_root_tarballs() {
    local rootfs=$cache/rootfs.tmp
    rm -rf "$rootfs"
    log "debootstrap $suite from $mirror"
    # Its few hundred lines of progress go to a log, shown when it fails.
    if ! debootstrap "${debootstrap_args[@]}" "$suite" "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1; then
        tail -n 30 "$cache/debootstrap.log" >&2
        echo "build-image.sh: debootstrap failed (log: $cache/debootstrap.log)" >&2
        return 1
    fi
    configure_apt "$rootfs"
    # No package lists and no downloaded packages in the image; apt-get update fetches them.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
    rm -rf "$rootfs"/var/log/* "$rootfs"/tmp/*
    # What is this machine's, not the image's: a runtime provides devices, the resolver, the
    # host name (buildah's RUN steps too).
    rm -rf "$rootfs"/dev/* "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"
    : > "$rootfs/etc/machine-id"
    tar --numeric-owner --xattrs -C "$rootfs" -cf "$cache/$suite.tar.tmp" .
    slimify "$rootfs"
    tar --numeric-owner --xattrs -C "$rootfs" -cf "$cache/$suite-slim.tar.tmp" .
    rm -rf "$rootfs"
    mv "$cache/$suite.tar.tmp" "$cache/$suite.tar"
    mv "$cache/$suite-slim.tar.tmp" "$cache/$suite-slim.tar"
}

import_image() {  # import_image TARBALL NAME
    local ctr
    ctr=$(b from scratch)
    b add "$ctr" "$1" / >/dev/null
    b config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --cmd bash "$ctr"
    b commit --quiet --rm "$ctr" "$2" >/dev/null
}

# The cache key: everything that decides the base images (the settings at the top and the
# functions that make them), not the rest of this script.
key=$( {
    echo "$suite $mirror $security_mirror ${debootstrap_args[*]}"
    declare -f configure_apt slimify make_root_tarballs import_image
} | sha256sum | cut -c1-16)
cache=${PHASESCALE_IMAGE_CACHE:-${HOME:-/root}/.cache/phasescale-image}/$key
base_image=localhost/debian:$suite-$key
slim_image=localhost/debian:$suite-slim-$key

# The two base images, from the cache (made first when missing). Concurrent runs wait on a lock.
ensure_base_images() {
    mkdir -p "$cache"
    exec 9>"$cache/.lock"
    flock 9
    if [[ ! -f $cache/$suite.tar || ! -f $cache/$suite-slim.tar ]]; then
        local start=$SECONDS
        make_root_tarballs
        log "base file systems made in $((SECONDS - start)) s"
    fi
    local tarball name
    for tarball in "$suite" "$suite-slim"; do
        name=localhost/debian:$tarball-$key
        if ! b inspect --type image "$name" >/dev/null 2>&1; then
            log "importing $name"
            import_image "$cache/$tarball.tar" "$name"
        fi
    done
    exec 9>&-
}

ensure_base_images
if [[ $base_only == 1 ]]; then
    echo "$base_image"
    echo "$slim_image"
    exit 0
fi

build_args=(--build-arg "BUILD_IMAGE=$base_image" --build-arg "RUNTIME_IMAGE=$slim_image"
    --build-arg BINARIES=build)
if [[ -n $binaries ]]; then
    # The binaries as the image the runtime stage copies /out from (the build stage is unused,
    # so buildah skips it).
    for f in cli/phasescale operator/phasescale-operator; do
        [[ -x $binaries/$f ]] || { echo "build-image.sh: $binaries/$f is missing (build first)" >&2; exit 1; }
    done
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    # The same paths, modes and stripping as the build stage's `install` lines.
    install -d "$out/usr/local/bin" "$out/usr/share/phasescale"
    install -m 0755 -s "$binaries/cli/phasescale" "$binaries/operator/phasescale-operator" \
        "$out/usr/local/bin/"
    install -m 0644 model/pretrained/default.model.json "$out/usr/share/phasescale/"
    binaries_image=localhost/phasescale-binaries:$$
    ctr=$(b from scratch)
    b copy "$ctr" "$out/" /out/ >/dev/null
    b commit --quiet --rm "$ctr" "$binaries_image" >/dev/null
    trap 'rm -rf "$out"; b rmi "$binaries_image" >/dev/null 2>&1 || true' EXIT
    # No intermediate images: with vfs each would be a full copy of the file system.
    build_args+=(--build-arg "BINARIES=$binaries_image" --target runtime --layers=false)
else
    # Intermediate images, so that a rebuild reuses the build stage's dependency layer.
    build_args+=(--build-arg "PHASESCALE_JOBS=$jobs" --layers)
fi

start=$SECONDS
log "building $tag${binaries:+ (runtime stage only, binaries from $binaries)}"
b bud --isolation chroot --format docker --force-rm --pull-never "${build_args[@]}" -t "$tag" -f Dockerfile . >&2
log "built $tag in $((SECONDS - start)) s"
echo "$tag"
