#!/usr/bin/env bash
# vpa.live.smoke: the real metrics-server and VPA (tests/vpa-live/start.sh) against the test
# control plane, fed by tools/replay-exporter standing in for a kubelet. Runs under
# tests/testenv/with-testenv.sh. A StatefulSet of 2 Guaranteed pods is pinned to kwok-node-0,
# whose kubelet endpoint (InternalIP, daemonEndpoints port) is pointed at the exporter, which
# replays `phasescale generate --jobs 2` for those two pods. Asserts:
#   - KWOK keeps the node's InternalIP and kubelet port through a re-initialisation;
#   - metrics.k8s.io serves both pods' usage, and the memory is a value of the replayed trace
#     (exactly: the exporter serves the trace's bytes);
#   - a VerticalPodAutoscaler (updateMode InPlaceOrRecreate) on the StatefulSet gets
#     status.recommendation;
#   - the updater applies the recommendation to a pod: resized in place (same pod UID, KWOK's
#     resize stages) or evicted and re-created with it (new UID, set by the admission
#     controller); which one is printed.
# Usage: smoke.sh REPLAY_EXPORTER PHASESCALE_CLI
set -euo pipefail

replay=$1 cli=$2
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$PHASESCALE_TESTENV_BIN:$PATH"
work=$(mktemp -d /tmp/phasescale-vpa-live-XXXXXX)
# shellcheck source=../lib.sh
source "$here/../lib.sh"  # check, wait_for, summary, stop_all_bg, free_port, start_kubelet_exporter, pods_running

ns=vpa-live
node=kwok-node-0

must() {  # must DESCRIPTION COMMAND...: check, and stop at the first failure (what follows needs it)
    check "$@"
    ((failures == 0)) || exit 1
}

cleanup() {
    local rc=$?
    stop_all_bg
    "$here/stop.sh" "$work/vpa" || rc=1
    if [[ $rc -ne 0 || $failures -ne 0 ]]; then
        for f in "$work"/vpa/logs/*.log "$work/exporter.log"; do
            [[ -f $f ]] || continue
            echo "--- $(basename "$f") (tail) ---"; tail -n 25 "$f"
        done
    fi
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT

# The updater may act on a pod as soon as it has a recommendation (the upstream default waits
# 12 h for a pod whose requests are within the recommended range).
PHASESCALE_VPA_LIVE_UPDATER_LIFETIME=1s PHASESCALE_VPA_LIVE_OWNER_PID=$$ \
    "$here/start.sh" "$work/vpa" >/dev/null
# shellcheck disable=SC1091
source "$work/vpa/env"

# The "kubelet": the exporter replays 2 executions as the StatefulSet's pods, 15 s of trace
# per wall second, on HTTPS with a certificate of the test CA (metrics-server verifies it).
"$cli" generate --jobs 2 --seed 7 --out "$work/trace.csv" >/dev/null
kubelet_port=$(free_port)
prom_port=$(free_port)
start_kubelet_exporter "$replay" "$work/exporter.log" "$prom_port" "$kubelet_port" \
    --trace "$work/trace.csv" --namespace "$ns" --speed 15 --loop --pod-map '#0=trainer-0,#1=trainer-1' ||
    { echo "FAIL: the exporter does not serve /metrics"; exit 1; }
must "the exporter serves /metrics/resource over HTTPS (test CA)" wait_for 20 \
    curl -sf --cacert "$PHASESCALE_TESTENV_CA_FILE" -o /dev/null \
    "https://127.0.0.1:$kubelet_port/metrics/resource"

"$here/point-node.sh" "$node" "$kubelet_port"
node_endpoint() {
    kubectl get node "$node" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address} {.status.daemonEndpoints.kubeletEndpoint.Port}'
}
must "$node points at 127.0.0.1:$kubelet_port" test "$(node_endpoint)" == "127.0.0.1 $kubelet_port"
# A node that is not Ready is initialised again by KWOK (stages/node.yaml, node-initialize),
# which writes the whole status: the endpoint must survive it.
kubectl patch node "$node" --subresource status --type strategic -p \
    '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Test","message":"test"}]}}' >/dev/null
node_ready_again() {
    [[ $(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}
must "KWOK makes $node Ready again" wait_for 30 node_ready_again
check "... and keeps its InternalIP and kubelet port" test "$(node_endpoint)" == "127.0.0.1 $kubelet_port"

kubectl create namespace "$ns" >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: trainer, namespace: $ns}
spec:
  replicas: 2
  serviceName: trainer
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: train}}
  template:
    metadata: {labels: {app: train}}
    spec:
      nodeSelector: {kubernetes.io/hostname: $node}
      tolerations: [{operator: Exists}]
      containers:
        - name: main
          image: trainer
          resources:
            requests: {cpu: "3", memory: 12Gi}
            limits: {cpu: "3", memory: 12Gi}
YAML
must "the StatefulSet's 2 pods run on $node" wait_for 60 pods_running 2 -n "$ns" -l app=train

# metrics.k8s.io: both pods, container main, memory one of the trace's values of its execution
# (the trace's memory column in bytes; metrics-server answers in Ki, exact for whole KiB).
pod_metrics() { kubectl get --raw "/apis/metrics.k8s.io/v1beta1/namespaces/$ns/pods"; }
both_pods_have_metrics() {
    [[ $(pod_metrics | jq '[.items[] | select(.containers[0].name == "main")] | length') == 2 ]]
}
must "metrics.k8s.io serves both pods' usage" wait_for 90 both_pods_have_metrics
pod_metrics >"$work/pod-metrics.json"
jq -c '.items[] | {pod: .metadata.name, usage: .containers[0].usage}' "$work/pod-metrics.json"
memory_from_trace() {  # memory_from_trace POD INDEX: the pod's memory is a sample of execution INDEX
    python3 - "$work/trace.csv" "$work/pod-metrics.json" "$1" "$2" <<'PY'
import csv, json, sys
trace, metrics, pod, index = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
units = {"": 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3}
item = next(i for i in json.load(open(metrics))["items"] if i["metadata"]["name"] == pod)
mem = item["containers"][0]["usage"]["memory"]
num = mem.rstrip("KMGi")
served = int(num) * units[mem[len(num):]]
rows = list(csv.DictReader(open(trace)))
ids = list(dict.fromkeys(r["pod.id"] for r in rows))  # --pod-map #N: trace order
samples = {int(float(r["mem.working.set"])) for r in rows if r["pod.id"] == ids[index]}
ok = served in samples
print(f"{pod}: metrics.k8s.io memory {served} B; in the trace of execution #{index}: {ok}")
sys.exit(0 if ok else 1)
PY
}
check "trainer-0's memory is a sample of the trace's execution #0" memory_from_trace trainer-0 0
check "trainer-1's memory is a sample of the trace's execution #1" memory_from_trace trainer-1 1

uid_before=$(kubectl -n "$ns" get pod trainer-0 trainer-1 -o jsonpath='{.items[*].metadata.uid}')
kubectl apply -f - >/dev/null <<YAML
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: trainer, namespace: $ns}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: trainer}
  updatePolicy: {updateMode: InPlaceOrRecreate}
YAML
target() {
    kubectl -n "$ns" get vpa trainer -o jsonpath='{.status.recommendation.containerRecommendations[?(@.containerName=="main")].target}'
}
has_recommendation() { [[ -n $(target) ]]; }
must "the VerticalPodAutoscaler gets status.recommendation" wait_for 90 has_recommendation
kubectl -n "$ns" get vpa trainer -o jsonpath='{.status.recommendation.containerRecommendations[0]}{"\n"}'  # target and bounds

# The pods' cpu requests, once one differs from the StatefulSet's 3 cores.
requests() {  # per pod: name uid cpu memory
    kubectl -n "$ns" get pods -l app=train --no-headers -o custom-columns=NAME:.metadata.name,\
UID:.metadata.uid,CPU:.spec.containers[0].resources.requests.cpu,\
MEMORY:.spec.containers[0].resources.requests.memory
}
one_updated() { requests | awk '$3 != "3"' | grep -q .; }
must "the updater applies the recommendation to a pod" wait_for 90 one_updated
requests | tee "$work/requests.txt"
read -r pod uid cpu memory < <(awk '$3 != "3"' "$work/requests.txt" | head -n 1)
if [[ " $uid_before " == *" $uid "* ]]; then
    echo "$pod was resized in place (same UID): cpu $cpu, memory $memory"
    resized_status() {
        [[ $(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.status.containerStatuses[0].resources.requests.cpu}') == "$cpu" ]]
    }
    check "KWOK actuates the resize (status resources = spec)" wait_for 30 resized_status
    check "a ResizeCompleted event for $pod" wait_for 30 sh -c \
        "kubectl -n $ns get events --field-selector involvedObject.name=$pod,reason=ResizeCompleted -o name | grep -q ."
else
    echo "$pod was evicted and re-created (new UID): cpu $cpu, memory $memory"
fi
want_cpu=$(target | jq -r .cpu)
check "its cpu request is the recommendation's target ($want_cpu)" test "$cpu" == "$want_cpu"

summary vpa.live.smoke
