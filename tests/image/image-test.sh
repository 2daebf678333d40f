#!/usr/bin/env bash
# The image, built and run (docs/image.md):
#   1. scripts/build-image.sh --binaries builds the Dockerfile's runtime stage with buildah from
#      the binaries of this build (the base images come from the image.base fixture);
#   2. the image: user 65532 and the operator as entrypoint in its config; it holds the two
#      binaries, the default model and their libraries (every library found inside it), no
#      compiler, headers or apt lists; the entrypoint and the CLI run from it (--help, inspect);
#   3. phasescale-operator runs from the image's file system (buildah mount, chroot) as user
#      65532 with a read-only root (run-in-image.sh), with the in-cluster configuration of
#      deploy/'s ServiceAccount, against the test control plane and a real Prometheus scraping
#      tools/replay-exporter: it takes the Lease, /healthz and /metrics answer, one pod is
#      labelled and resized in place, and it stops cleanly on SIGTERM.
# Usage: image-test.sh BUILD_DIR REPLAY_EXPORTER PHASESCALE_CLI SOURCE_DIR  (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
b() { buildah --storage-driver vfs "$@"; }

# ------------------------------------------------------------------ outside: build, check
if [[ ${1:-} != --inside ]]; then
    [[ $# -eq 4 ]] || { echo "usage: $0 BUILD_DIR REPLAY_EXPORTER PHASESCALE_CLI SOURCE_DIR" >&2; exit 2; }
    build_dir=$1 root=$4
    # shellcheck source=../lib.sh
    source "$here/../lib.sh"
    work=$(mktemp -d "${TMPDIR:-/tmp}/phasescale-image-test.XXXXXX")
    image=localhost/phasescale:test-$$
    ctr=""
    cleanup() {
        local rc=$?
        [[ -z $ctr ]] || { b umount "$ctr" > /dev/null; b rm "$ctr" > /dev/null; } || true
        b rmi "$image" > /dev/null 2>&1 || true
        if [[ $rc == 0 && $failures == 0 ]]; then rm -rf "$work"; else echo "state kept in $work"; fi
    }
    trap cleanup EXIT

    t0=$SECONDS
    bash "$root/scripts/build-image.sh" --binaries "$build_dir" --tag "$image" > "$work/build.log" 2>&1 ||
        { tail -n 30 "$work/build.log"; echo "FAIL: build-image.sh --binaries"; exit 1; }
    echo "ok: the runtime image built in $((SECONDS - t0)) s"
    echo "image size: $(b images --format '{{.Size}}' "$image") (buildah images)"

    config() { b inspect --type image "$image" | jq -c ".OCIv1.config.$1"; }
    check "the image runs as user 65532:65532" test "$(config User)" == '"65532:65532"'
    check "its entrypoint is the operator" test "$(config Entrypoint)" == '["/usr/local/bin/phasescale-operator"]'
    entrypoint=$(config Entrypoint | jq -r '.[0]')

    ctr=$(b from --pull-never "$image")
    rootfs=$(b mount "$ctr")
    listing() { (cd "$rootfs/$1" && ls -A | tr '\n' ' '); }
    check "/usr/local/bin holds the two binaries only" test "$(listing usr/local/bin)" == "phasescale phasescale-operator "
    check "/usr/share/phasescale holds the default model only" test "$(listing usr/share/phasescale)" == "default.model.json "
    check "the default model is the repository's" cmp -s "$rootfs/usr/share/phasescale/default.model.json" \
        "$root/model/pretrained/default.model.json"
    no_build_tools() {
        local t bad=0
        for t in cc gcc g++ c++ cpp clang ld as make cmake ninja; do
            [[ ! -e $rootfs/usr/bin/$t && ! -e $rootfs/usr/local/bin/$t ]] || { echo "  $t is in the image"; bad=1; }
        done
        [[ ! -e $rootfs/usr/include/stdio.h ]] || { echo "  C headers are in the image"; bad=1; }
        return $bad
    }
    check "no compiler, build tool or C headers" no_build_tools
    check "no apt package lists or downloaded packages" test -z \
        "$(find "$rootfs/var/lib/apt/lists" "$rootfs/var/cache/apt" -type f \( -name '*_Packages*' -o -name '*.deb' -o -name '*.bin' \))"
    libs_found() {  # every library of BIN, found inside the image by its own loader
        chroot "$rootfs" ldd "$1" > "$work/ldd.txt" && ! grep 'not found' "$work/ldd.txt"
    }
    check "every library of phasescale-operator is in the image" libs_found /usr/local/bin/phasescale-operator
    check "every library of phasescale is in the image" libs_found /usr/local/bin/phasescale

    # The mount points a runtime makes for a Pod (here: for run-in-image.sh) before the root
    # becomes read-only; the container is a throwaway.
    mkdir -p "$rootfs/run/secrets/kubernetes.io/serviceaccount"
    sa_dir=$work/serviceaccount
    mkdir -m 755 "$sa_dir"
    in_image() { "$here/run-in-image.sh" "$rootfs" "$sa_dir" "$@"; }
    check "the entrypoint runs: --help, as 65532 with a read-only root" \
        bash -c "'$here/run-in-image.sh' '$rootfs' '$sa_dir' '$entrypoint' --help | grep -q -- --prometheus-url"
    check "the CLI runs from the image: inspect the default model" \
        bash -c "'$here/run-in-image.sh' '$rootfs' '$sa_dir' phasescale inspect /usr/share/phasescale/default.model.json > /dev/null"
    check "run-in-image.sh runs as uid 65532" test "$(in_image id -u)" == 65532
    check "run-in-image.sh: the root file system is read-only (/tmp too)" \
        bash -c "! '$here/run-in-image.sh' '$rootfs' '$sa_dir' sh -c 'echo > /tmp/probe' 2> '$work/probe.txt' &&
                 grep -q 'Read-only file system' '$work/probe.txt'"

    rc=0
    "$here/../testenv/with-testenv.sh" "$0" --inside "$work" "$rootfs" "$sa_dir" "$entrypoint" "$@" || rc=$?
    check "the operator from the image passed the smoke test on the control plane" test "$rc" == 0
    summary image
    exit
fi

# ------------------------------------------------------------------ inside: the smoke test
shift
work=$1 rootfs=$2 sa_dir=$3 entrypoint=$4 replay=$6 cli=$7 root=$8
# shellcheck source=../lib.sh
source "$here/../lib.sh"
export PATH="$PHASESCALE_TESTENV_BIN:$PATH"
cleanup() {
    local rc=$?
    stop_all_bg
    if [[ $rc -ne 0 || $failures -ne 0 ]]; then
        echo "--- operator log (tail) ---"; tail -n 30 "$work/operator.log" 2>/dev/null || true
    fi
}
trap cleanup EXIT
ns=image-smoke
system_ns=phasescale-system

# Prometheus scraping the replay exporter and the operator.
exporter_port=$(free_port) metrics_port=$(free_port) prom_port=$(free_port)
start_prometheus "$work/prom" "$prom_port" "127.0.0.1:$exporter_port" "127.0.0.1:$metrics_port" ||
    { echo "FAIL: Prometheus not ready"; exit 1; }

# The CRD, and deploy/'s namespace and RBAC: the operator runs as deploy/'s ServiceAccount.
kubectl apply -f "$root/crds/" -f "$root/deploy/00-namespace.yaml" -f "$root/deploy/10-rbac.yaml" > /dev/null
wait_established phaseautoscalers.phasescale.io
# What the kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount.
kubectl create token phasescale-operator -n "$system_ns" --duration=1h > "$sa_dir/token"
cp "$PHASESCALE_TESTENV_CA_FILE" "$sa_dir/ca.crt"
echo "$system_ns" > "$sa_dir/namespace"
chmod 644 "$sa_dir"/*

# One Guaranteed pod at 7 cores and 28Gi; InPlace, at most 4 cores and 8Gi: it must shrink.
kubectl create namespace "$ns" > /dev/null
trainer_pod trainer-0 "$ns" kwok-node-0 7 28Gi | kubectl apply -f - > /dev/null
kubectl apply -f - > /dev/null <<YAML
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: trainers, namespace: $ns}
spec:
  selector: {matchLabels: {app: train}}
  mode: InPlace
  cooldownSeconds: 1
  containerPolicies:
    - {containerName: "*", minAllowed: {cpu: 100m, memory: 256Mi}, maxAllowed: {cpu: "4", memory: 8Gi}}
YAML
wait_for 60 pods_running 1 -n "$ns" || { echo "FAIL: the pod is not Running"; exit 1; }
uid=$(kubectl get pod trainer-0 -n "$ns" -o jsonpath='{.metadata.uid}')
"$cli" generate --jobs 1 --seed 5 --out "$work/trace.csv" > /dev/null
start_exporter "$replay" "$work/exporter.log" "$exporter_port" --trace "$work/trace.csv" --namespace "$ns" \
    --speed 15 --pod-map '#0=trainer-0' --loop || { echo "FAIL: exporter not up"; exit 1; }
series_ready() { [[ $(sampled_containers "$prom_port" "$ns" 1m 4) == 1 ]]; }
wait_for 60 series_ready || { echo "FAIL: Prometheus has no samples of the pod"; exit 1; }

# The operator from the image, in-cluster: deploy/'s arguments with this Prometheus, a 1 s tick,
# and the metrics on loopback (the network is the host's).
url=${PHASESCALE_TESTENV_APISERVER_URL#https://}
export KUBERNETES_SERVICE_HOST=${url%:*} KUBERNETES_SERVICE_PORT=${url##*:}
start_bg "$work/operator.log" "$here/run-in-image.sh" "$rootfs" "$sa_dir" "$entrypoint" \
    --prometheus-url "http://127.0.0.1:$prom_port" --prometheus-timeout 10s --scrape-interval 1s --tick 1s \
    --leader-elect --lease-namespace "$system_ns" --lease-name phasescale-operator \
    --metrics-addr "127.0.0.1:$metrics_port" --log-level debug
operator_pid=$bg_pid
healthz() { curl -fsS "http://127.0.0.1:$metrics_port/healthz" -o /dev/null 2>/dev/null; }
check "/healthz answers 200" wait_for 30 healthz
# run-in-image.sh execs all the way, so the process started is the operator itself.
check "the operator runs as uid 65532 (real and effective)" \
    test "$(awk '/^Uid:/ {print $2, $3}' "/proc/$operator_pid/status")" == "65532 65532"
check "the operator's root is the image's file system" test "$(readlink "/proc/$operator_pid/root")" == "$rootfs"
holder() { kubectl get lease phasescale-operator -n "$system_ns" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
leased() { [[ -n $(holder) ]]; }
check "the operator took the Lease" wait_for 30 leased
leads() { curl -fsS "http://127.0.0.1:$metrics_port/metrics" | grep -qx 'phasescale_leader 1'; }
check "/metrics answers: phasescale_leader 1" wait_for 10 leads
labelled() { [[ -n $(kubectl get pod trainer-0 -n "$ns" -o jsonpath='{.metadata.labels.phasescale\.io/phase}') ]]; }
check "the pod is labelled with its phase" wait_for 60 labelled
resized() {
    local cpu
    cpu=$(kubectl get pod trainer-0 -n "$ns" -o jsonpath='{.spec.containers[0].resources.requests.cpu}')
    [[ $cpu != 7 ]] && [[ $(kubectl get pod trainer-0 -n "$ns" -o jsonpath='{.metadata.uid}') == "$uid" ]]
}
check "the pod was resized in place (same pod, below 7 cores)" wait_for 60 resized
echo "  requests now: $(kubectl get pod trainer-0 -n "$ns" -o jsonpath='{.spec.containers[0].resources.requests}')"
check "the operator logged no write refused by the read-only root" bash -c "! grep -qi 'read-only file system' '$work/operator.log'"
kill -TERM "$operator_pid"
rc=0
wait "$operator_pid" || rc=$?
check "the operator stops cleanly on SIGTERM" test "$rc" == 0
check "the Lease was released" test -z "$(holder)"
summary image-smoke
