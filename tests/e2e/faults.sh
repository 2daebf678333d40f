#!/usr/bin/env bash
# Faults injected while phasescale-operator runs, beyond those of e2e.sh (issue 12 item 8): run
# under tests/testenv/with-testenv.sh with the kube-apiserver's audit policy
# faults-audit-policy.yaml (audit lines go to the apiserver's log), and a real Prometheus
# scraping tools/replay-exporter. The operator runs as service accounts of its own (replica-a,
# replica-b), so that the audit log tells which replica wrote what, when, with which body.
#
#  1. SIGKILL inside a resize. The kill must land after the pods/resize PATCH and before what
#     follows it (the Event and the status, sent a tick later). A kill timed on the audit log
#     would race with the write queue (both well under a tick); instead a
#     ValidatingAdmissionPolicy refuses every write of replica-a but pods/resize (a policy
#     matching "pods" does not match the subresource "pods/resize"). From the first resize
#     that lands under it until the kill, the API server holds exactly what a kill right after
#     the latest resize would leave, however late the kill comes; the operator's log shows the
#     refused Event and status, so the kill did fall inside. Then the policy goes, the operator is
#     started again and leads once the dead replica's lease expired: the pod keeps what the
#     killed operator's last resize of it set (it may resize it again before the kill, as the
#     resize subresource still passes), no second resize of it comes within a cooldown of the
#     restart (or only to the same values, or one for memory at risk, which cuts no CPU; without
#     the restart's cooldown one came), the status converges.
#  2. etcd SIGKILLed and started again on its data (the kube-apiserver reconnects): the operator
#     ticks on with /healthz 200, writes again afterwards, its status converges, and no
#     resize is sent twice (over the whole run, no pod gets two successful resizes in a row with
#     the same body).
#  3. Two replicas, the leader's tick held up by a slow Prometheus while it loses the lease.
#     tests/kube's leader_election_write_fence fences a kube::Client, and e2e.sh's failover
#     SIGKILLs the leader; neither has a replica that goes on with a tick after losing the lease.
#     Here replica-a (--tick 30s) reads Prometheus through a proxy that holds its queries; while
#     its tick waits, its Lease updates are refused (its RoleBinding on leases removed: its
#     renewals fail, as against an API server it cannot reach), replica-b takes over, then the
#     proxy lets the answers through. replica-a's tick then decides writes (they fail: its
#     request errors counter), and the audit log shows none of them reached the API server after
#     its lease was cut (without the write fence its status patch did); replica-b writes.
# Usage: faults.sh OPERATOR REPLAY_EXPORTER PHASESCALE_CLI SOURCE_DIR
set -euo pipefail

operator=$1 replay=$2 cli=$3 root=$4
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$PHASESCALE_TESTENV_BIN:$PATH"
work=$(mktemp -d /tmp/phasescale-faults-XXXXXX)
keep=${PHASESCALE_E2E_KEEP:-0}
audit_log=$PHASESCALE_TESTENV_DIR/logs/apiserver.log
# shellcheck source=../lib.sh
source "$here/../lib.sh"  # check, wait_for, summary, start_bg, free_port, start_exporter, pods_running, ...

cleanup() {
    local rc=$?
    stop_all_bg
    if [[ $rc -ne 0 || $failures -ne 0 ]]; then
        local f
        for f in "$work"/op-*.log; do
            [[ -e $f ]] || continue
            echo "--- $(basename "$f") (tail) ---"; tail -n 15 "$f"
        done
    fi
    [[ $keep == 1 ]] && echo "state kept in $work" || rm -rf "$work"
}
trap cleanup EXIT

app=faults-app
cooldown=20  # the PhaseAutoscaler's cooldownSeconds

# ---------------------------------------------------------------- the audit log

# The operator's writes so far (lines of the apiserver's log that are audit events), one JSON
# object each: t (received, RFC 3339 with microseconds, so that strings compare as times),
# secs (whole seconds), who (replica-a or replica-b), what (resource[/subresource]), name,
# code, body.
writes() {
    grep -h '"apiVersion":"audit.k8s.io/v1"' "$audit_log" | jq -c 'select(.stage == "ResponseComplete") | {
        t: .requestReceivedTimestamp,
        secs: (.requestReceivedTimestamp | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601),
        who: (.user.username | sub(".*:"; "")), verb,
        what: (.objectRef.resource + (if .objectRef.subresource then "/" + .objectRef.subresource else "" end)),
        name: .objectRef.name, code: .responseStatus.code, body: .requestObject, pod: .responseObject}'
}
now_rfc3339() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
# count_writes JQ_CONDITION [JQ_ARGS...]: how many of them meet the condition (nothing printed
# if jq fails, so that neither of the two below passes on an error).
count_writes() {
    local cond=$1
    shift
    writes | jq -s "$@" "[.[] | select($cond)] | length"
}
some_write() { (($(count_writes "$@") > 0)); }
no_write() { [[ $(count_writes "$@") == 0 ]]; }

# ---------------------------------------------------------------- identities and workload

kubectl apply -f "$root/crds/" > /dev/null
wait_established phaseautoscalers.phasescale.io
kubectl apply -f - > /dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: faults-operator}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: replica-a, namespace: faults-operator}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: replica-b, namespace: faults-operator}
---
# What the operator needs, as the chart's role does, without leases (granted apart below).
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: faults-operator}
rules:
  - apiGroups: ["", "events.k8s.io", "phasescale.io", "apiextensions.k8s.io", "autoscaling.k8s.io"]
    resources: ["*"]
    verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: faults-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: faults-operator}
subjects:
  - {kind: ServiceAccount, name: replica-a, namespace: faults-operator}
  - {kind: ServiceAccount, name: replica-b, namespace: faults-operator}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: faults-lease, namespace: default}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: faults-lease-a, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: faults-lease}
subjects: [{kind: ServiceAccount, name: replica-a, namespace: faults-operator}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: faults-lease-b, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: faults-lease}
subjects: [{kind: ServiceAccount, name: replica-b, namespace: faults-operator}]
YAML
for r in replica-a replica-b; do
    kc=$work/$r.kubeconfig
    kubectl config --kubeconfig="$kc" set-cluster testenv --server="$PHASESCALE_TESTENV_APISERVER_URL" \
        --certificate-authority="$PHASESCALE_TESTENV_CA_FILE" --embed-certs=true > /dev/null
    kubectl config --kubeconfig="$kc" set-credentials "$r" \
        --token="$(kubectl create token "$r" -n faults-operator --duration=2h)" > /dev/null
    kubectl config --kubeconfig="$kc" set-context "$r" --cluster=testenv --user="$r" > /dev/null
    kubectl config --kubeconfig="$kc" use-context "$r" > /dev/null
done

kubectl create namespace "$app" > /dev/null
for j in 0 1 2; do
    trainer_pod "trainer-$j" "$app" "kwok-node-$j" 2 4Gi | kubectl apply -f - > /dev/null
done
kubectl apply -f - > /dev/null <<YAML
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: trainers, namespace: $app}
spec:
  selector: {matchLabels: {app: train}}
  mode: InPlace
  cooldownSeconds: $cooldown
  minChange: 0.05
  containerPolicies:
    - {containerName: "*", minAllowed: {cpu: 100m, memory: 256Mi}, maxAllowed: {cpu: "6", memory: 16Gi}}
YAML
wait_for 60 pods_running 3 -n "$app" || { echo "FAIL: pods not Running"; exit 1; }

# The trace of e2e.sh (3 jobs, a sample about every 15 s) replayed 15x, scraped every second.
"$cli" generate --jobs 3 --seed 5 --out "$work/trace.csv" > /dev/null
exporter_port=$(free_port)
start_exporter "$replay" "$work/exporter.log" "$exporter_port" --trace "$work/trace.csv" --namespace "$app" \
    --speed 15 --pod-map '#0=trainer-0,#1=trainer-1,#2=trainer-2' --loop || { echo "FAIL: exporter not up"; exit 1; }
prom_port=$(free_port)
start_prometheus "$work/prom" "$prom_port" "127.0.0.1:$exporter_port" || { echo "FAIL: Prometheus not ready"; exit 1; }
series_ready() { [[ $(sampled_containers "$prom_port" "$app" 1m 4) == 3 ]]; }
wait_for 60 series_ready || { echo "FAIL: Prometheus has no samples of the 3 pods"; exit 1; }

# start_operator NAME REPLICA METRICS_PORT TICK PROMETHEUS_URL [FLAGS...]: sets op_pid.
start_operator() {
    local name=$1 replica=$2 port=$3 tick=$4 url=$5
    shift 5
    start_bg "$work/op-$name.log" "$operator" --kubeconfig "$work/$replica.kubeconfig" \
        --prometheus-url "$url" --tick "$tick" --scrape-interval 1s --namespaces "$app" \
        --metrics-addr "127.0.0.1:$port" --phase-label-hold 0 --leader-elect \
        --lease-namespace default --lease-name faults --log-level debug "$@"
    op_pid=$bg_pid
}
metric() { curl -fsS "http://127.0.0.1:$2/metrics" | awk -v m="$1" '$1 == m {print int($2)}'; }
ticks_since() { (( $(metric phasescale_ticks_total "$1") >= $2 )); }
leading() { [[ $(metric phasescale_leader "$1" 2>/dev/null) == 1 ]]; }
labelled() {  # every pod of the app carries a phase label other than "unknown"
    [[ $(kubectl get pods -n "$app" -o json | jq '[.items[] | .metadata.labels["phasescale.io/phase"] // "unknown"
        | select(. != "unknown")] | length') == 3 ]]
}
status_converged() {  # 3 pods tracked, Ready and MetricsAvailable True, phases as the labels say
    local pas pods
    pas=$(kubectl get pas trainers -n "$app" -o json)
    pods=$(kubectl get pods -n "$app" -o json | jq -c '[.items[].metadata.labels["phasescale.io/phase"]] | group_by(.) | map({(.[0]): length}) | add')
    jq -e --argjson pods "$pods" '.status.podsTracked == 3 and
        ([.status.conditions[] | select((.type == "Ready" or .type == "MetricsAvailable") and .status == "True")] | length) == 2 and
        (.status.podsPerPhase | with_entries(select(.value != null and .value > 0))) == $pods' <<< "$pas" > /dev/null
}
prom_url=http://127.0.0.1:$prom_port
port_a=$(free_port)

# ---------------------------------------------------------------- 1. SIGKILL inside a resize

start_operator a1 replica-a "$port_a" 1s "$prom_url"
a1_pid=$op_pid
wait_for 30 curl -fsS "http://127.0.0.1:$port_a/readyz" -o /dev/null 2>/dev/null || { echo "FAIL: operator not ready"; exit 1; }
wait_for 60 labelled || { echo "FAIL: the pods got no phase label"; exit 1; }

kubectl apply -f - > /dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: faults-only-resize}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: ["", events.k8s.io, phasescale.io]
        apiVersions: ["*"]
        operations: [CREATE, UPDATE, DELETE]
        resources: [pods, events, phaseautoscalers, phaseautoscalers/status]
  matchConditions:
    - {name: replica-a, expression: "request.userInfo.username == 'system:serviceaccount:faults-operator:replica-a'"}
  validations:
    - {expression: "false", message: "faults.sh: only pods/resize passes"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: faults-only-resize}
spec:
  policyName: faults-only-resize
  validationActions: [Deny]
YAML
refused() {
    ! kubectl label pod trainer-0 -n "$app" faults=probe --dry-run=server \
        --as=system:serviceaccount:faults-operator:replica-a > /dev/null 2>&1
}
wait_for 20 refused || { echo "FAIL: the admission policy does not refuse replica-a's writes"; exit 1; }
policy_from=$(now_rfc3339)
# landed_resize first|last [POD [BEFORE]]: that resize of replica-a among those that landed under
# the policy (of POD, before the RFC 3339 time BEFORE): its JSON, nothing if there is none.
landed_resize() {
    writes | jq -s -c --arg t "$policy_from" --arg p "${2:-}" --arg before "${3:-}" \
        '[.[] | select(.who == "replica-a" and .what == "pods/resize" and .code == 200 and .t > $t
            and ($p == "" or .name == $p) and ($before == "" or .t < $before))] | '"$1"' // empty'
}
resize=""
deadline=$((SECONDS + 90))
while [[ -z $resize ]] && ((SECONDS < deadline)); do resize=$(landed_resize first); [[ -n $resize ]] || sleep 0.5; done
[[ -n $resize ]] || { echo "FAIL: no resize under the admission policy within 90 s"; exit 1; }
resized_pod=$(jq -r .name <<< "$resize")
echo "resize of $resized_pod landed: $(jq -c '.pod.spec.containers[0].resources' <<< "$resize")"
# Its result comes back to the tick thread at the next tick (1 s), which then queues the Event
# and the status: both are refused.
follow_ups_refused() {
    grep '"event not recorded"' "$work/op-a1.log" | grep -q "$app/$resized_pod Resized" &&
        grep -q '"status update failed"' "$work/op-a1.log"
}
check "kill inside a resize: the resize's Event and the status after it were refused (the kill falls between)" \
    wait_for 15 follow_ups_refused
kill -KILL "$a1_pid"
wait "$a1_pid" 2>/dev/null || true
kubectl delete validatingadmissionpolicybinding faults-only-resize > /dev/null
kubectl delete validatingadmissionpolicy faults-only-resize > /dev/null
wait_for 20 bash -c "! kubectl label pod trainer-0 -n $app faults=probe --dry-run=server --as=system:serviceaccount:faults-operator:replica-a 2>&1 | grep -q 'only pods/resize'" ||
    check "the admission policy is gone" false

# The killed operator's last writes may reach the API server after the kill (sent, still queued
# in its socket when it died; on a busy machine the API server reads them a moment later): what
# comes before the restarted operator starts is the killed one's, whenever the kill was.
a2_starts=$(now_rfc3339)
start_operator a2 replica-a "$port_a" 1s "$prom_url"
a2_pid=$op_pid
wait_for 30 curl -fsS "http://127.0.0.1:$port_a/readyz" -o /dev/null 2>/dev/null || check "restart: the operator is ready" false
# The killed replica never released the lease: the restarted one leads once it expired (15 s).
check "restart after the kill: the operator leads again once the lease expired" wait_for 40 leading "$port_a"
a2_leads=$(date +%s)
# The killed operator may have resized that pod again before the kill (once its cooldown had
# passed, a cut): what it set last is what the restarted one keeps.
last_resize=$(landed_resize last "$resized_pod" "$a2_starts")
resized_secs=$(jq -r .secs <<< "$last_resize")
resized_to=$(jq -c '.pod.spec.containers[0].resources' <<< "$last_resize")
echo "last resize of $resized_pod by the killed operator: $resized_to"
# Resources as the resize set them ($r), or a later resize's for a resource at risk, which the
# cooldown lets through: more memory or CPU, nothing less.
JQ_AS_RESIZED="$JQ_RESOURCES"' def as_resized($r): . == $r or at_risk_resize($r);'
kept_as_resized() {
    kubectl get pod "$resized_pod" -n "$app" -o json |
        jq -e --argjson r "$resized_to" "$JQ_AS_RESIZED"' .spec.containers[0].resources | as_resized($r)' > /dev/null
}
check "restart after the kill: $resized_pod keeps what the resize set (or more for a risk)" kept_as_resized
check "restart after the kill: the restarted operator writes the status" wait_for 20 some_write \
    '.who == "replica-a" and .what == "phaseautoscalers/status" and .code == 200 and .t > $t' --arg t "$a2_starts"
check "restart after the kill: the status converges (3 pods tracked, Ready, MetricsAvailable, phases as labelled)" \
    wait_for 30 status_converged

# ---------------------------------------------------------------- 2. etcd killed and restarted

t=$(metric phasescale_ticks_total "$port_a")
"$root/tests/testenv/testenv.sh" kill-component "$PHASESCALE_TESTENV_DIR" etcd > "$work/etcd-kill.log" 2>&1
check "etcd down: the operator keeps ticking" wait_for 20 ticks_since "$port_a" $((t + 5))
check "etcd down: /healthz 200" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_a/healthz")" == 200
"$root/tests/testenv/testenv.sh" start-component "$PHASESCALE_TESTENV_DIR" etcd > "$work/etcd-start.log" 2>&1
etcd_up=$(now_rfc3339)
wait_for 60 kubectl get --raw /readyz > /dev/null 2>&1 || check "etcd back: the kube-apiserver is ready" false
t=$(metric phasescale_ticks_total "$port_a")
check "etcd back: the operator ticks on" wait_for 30 ticks_since "$port_a" $((t + 3))
check "etcd back: the status converges" wait_for 30 status_converged
check "etcd back: the operator writes again (a status or pod write accepted)" wait_for 30 some_write \
    '.who == "replica-a" and .t > $t and .code < 300 and .what != "leases"' --arg t "$etcd_up"

# ---------------------------------------------------------------- 3. lease lost mid-tick

kill -TERM "$a2_pid"  # a clean stop: the lease is released
wait "$a2_pid" 2>/dev/null || true
# A proxy in front of Prometheus that holds every query while $work/hold exists.
proxy_port=$(free_port)
touch "$work/hold"
cat > "$work/hold-proxy.py" <<'PY'
import http.server, os, sys, time, urllib.request
port, upstream, hold = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class Hold(http.server.BaseHTTPRequestHandler):
    def relay(self):
        print("query", self.path, flush=True)
        while os.path.exists(hold):
            time.sleep(0.1)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0)) or None
        req = urllib.request.Request("http://127.0.0.1:%s%s" % (upstream, self.path), data=body, method=self.command)
        if self.headers.get("Content-Type"):
            req.add_header("Content-Type", self.headers["Content-Type"])
        with urllib.request.urlopen(req) as r:
            data = r.read()
            self.send_response(r.status)
            self.send_header("Content-Type", r.headers.get("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    do_GET = do_POST = relay
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Hold).serve_forever()
PY
start_bg "$work/proxy.log" python3 -u "$work/hold-proxy.py" "$proxy_port" "$prom_port" "$work/hold"
wait_for 10 bash -c "ss -ltnH 'sport = :$proxy_port' | grep -q ." || { echo "FAIL: proxy not listening"; exit 1; }
# replica-a: a tick of 30 s that may wait that long for Prometheus.
start_operator a3 replica-a "$port_a" 30s "http://127.0.0.1:$proxy_port" --prometheus-timeout 30s
a3_pid=$op_pid
check "lease: replica-a leads" wait_for 30 leading "$port_a"
holder_a=$(kubectl get lease faults -n default -o jsonpath='{.spec.holderIdentity}')
check "lease: replica-a's tick waits for Prometheus" wait_for 40 grep -q '^query' "$work/proxy.log"
port_b=$(free_port)
start_operator b1 replica-b "$port_b" 1s "$prom_url"
b1_pid=$op_pid
wait_for 30 curl -fsS "http://127.0.0.1:$port_b/readyz" -o /dev/null 2>/dev/null || check "replica-b ready" false
kubectl delete rolebinding faults-lease-a -n default > /dev/null  # replica-a's renewals now fail
revoked=$(now_rfc3339)
check "lease: replica-b takes over once replica-a's lease expired" wait_for 40 leading "$port_b"
b_leads=$(now_rfc3339)
check "lease: the Lease names replica-b" test "$(kubectl get lease faults -n default -o jsonpath='{.spec.holderIdentity}')" != "$holder_a"
check "lease: replica-a knows it lost the lease" bash -c "! curl -fsS http://127.0.0.1:$port_a/metrics | grep -q '^phasescale_leader 1'"
rm -f "$work/hold"  # replica-a's tick gets its answers and goes on
check "lease: replica-a's held tick ends" wait_for 40 grep -q '"msg":"tick"' "$work/op-a3.log"
sleep 2  # its write workers
# Its writes failed in the operator (its errors counter; their log lines come with its next tick,
# 30 s on), and none of them is in the audit log below: not sent, though its RBAC on pods and
# autoscalers still allowed them.
write_errors() {
    curl -fsS "http://127.0.0.1:$port_a/metrics" |
        awk '/^phasescale_kube_request_errors_total\{verb="(status|patch|resize|event)"\}/ {n += $2} END {print n + 0}'
}
check "lease: replica-a's tick had writes to make, and they failed" test "$(write_errors)" -ge 1
check "lease: no write of replica-a reached the API server after it lost the lease" no_write \
    '.who == "replica-a" and .t > $t and .what != "leases"' --arg t "$revoked"
check "lease: replica-b writes as the leader" wait_for 20 some_write \
    '.who == "replica-b" and .t > $t and .code < 300 and .what != "leases"' --arg t "$b_leads"
check "lease: the status converges under replica-b" wait_for 30 status_converged
stop_pid "$b1_pid"
stop_pid "$a3_pid"

# ---------------------------------------------------------------- over the whole run

writes > "$work/writes.jsonl"
# The pod resized inside the killed operator's resize: the restarted operator, which knows
# nothing of that resize, resizes it again no sooner than a cooldown after it took over (or to
# the same values, or for a resource at risk: more memory or CPU, nothing less).
check "kill inside a resize: no second resize of $resized_pod within a cooldown of the restart (but for a risk)" \
    jq -s -e --arg p "$resized_pod" --argjson s "$resized_secs" --argjson from "$((a2_leads - 1))" \
    --argjson c "$cooldown" --argjson r "$resized_to" "$JQ_AS_RESIZED"'
    [.[] | select(.what == "pods/resize" and .name == $p and .code == 200 and .secs > $s and .secs < $from + $c)
        | .pod.spec.containers[0].resources | select(as_resized($r) | not)]
    | length == 0' "$work/writes.jsonl"
check "no pod got two successful resizes in a row with the same body" jq -s -e \
    '[.[] | select(.what == "pods/resize" and .code == 200)] | group_by(.name)
     | map([.[].body] | . as $b | [range(1; length) | select($b[.] == $b[. - 1])] | length) | add // 0 | . == 0' \
    "$work/writes.jsonl"
echo "operator writes seen by the API server: $(wc -l < "$work/writes.jsonl") ($(jq -s '[.[] | select(.what == "pods/resize" and .code == 200)] | length' "$work/writes.jsonl") resizes)"

stop_all_bg
summary faults
