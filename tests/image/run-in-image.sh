#!/usr/bin/env bash
# run-in-image.sh ROOTFS SA_DIR CMD [ARGS...]: runs CMD from an image's file system (a buildah
# mount) as a container runtime would under a Pod with readOnlyRootFilesystem and runAsUser
# 65532: in a mount namespace of its own, the root file system bound read-only, /proc, a small
# /dev, and SA_DIR (token, ca.crt, namespace) read-only where the kubelet mounts the
# ServiceAccount. No other writable directory: what the image needs is found out, not given.
# The mount points must exist in ROOTFS (image-test.sh makes them, as a runtime does).
# Environment: only KUBERNETES_SERVICE_HOST/PORT (passed on when set) and PATH. Run as root.
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 ROOTFS SA_DIR CMD [ARGS...]" >&2; exit 2; }
if [[ ${RUN_IN_IMAGE_NS:-} != 1 ]]; then
    # The mounts vanish with the namespace when CMD exits.
    exec env RUN_IN_IMAGE_NS=1 unshare --mount --propagation private -- "$0" "$@"
fi
rootfs=$1 sa_dir=$2
shift 2
mount --bind "$rootfs" "$rootfs"
mount -t proc proc "$rootfs/proc"
mount -t tmpfs -o nosuid,mode=755,size=64k tmpfs "$rootfs/dev"
for d in null zero full random urandom; do
    touch "$rootfs/dev/$d"
    mount --bind "/dev/$d" "$rootfs/dev/$d"
done
mount --bind -o ro "$sa_dir" "$rootfs/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro "$rootfs"
env_vars=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
for v in KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT; do
    [[ -z ${!v:-} ]] || env_vars+=("$v=${!v}")
done
exec env -i "${env_vars[@]}" chroot --userspec=65532:65532 "$rootfs" "$@"
