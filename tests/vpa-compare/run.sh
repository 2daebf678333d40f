#!/usr/bin/env bash
# phasescale beside the real VPA on the same replayed training pods (issue 15; README.md here).
#
#   run.sh PHASESCALE_CLI OPERATOR REPLAY_EXPORTER OUT_DIR
#
# Starts a test control plane of its own (tests/testenv: two KWOK nodes, a kube-apiserver
# writing an audit log of every request), metrics-server and the VPA (tests/vpa-live), and two
# namespaces of PODS Guaranteed pods each (a StatefulSet "trainer", podManagementPolicy Parallel,
# pods trainer-0..PODS-1 at START_CPU/START_MEM): cmp-vpa on kwok-node-0 under a
# VerticalPodAutoscaler (updateMode VPA_MODE), cmp-phase on kwok-node-1 under a PhaseAutoscaler
# at its defaults (mode InPlace). One phasescale-replay-exporter per namespace replays the same
# trace (generated jobs and ../shared/data/torch runs, --speed SPEED, --loop, pod trainer-I =
# execution #I): it is its node's kubelet for metrics-server (--kubelet-listen) and is scraped
# by a real Prometheus for phasescale-operator. Over RECORD seconds it records both namespaces'
# pods and the VPA's status (kubectl watches, JSON lines), the VPA recommender's and the
# operator's loop time and RSS, and the API requests of each (audit log, by user agent); then
# scores both namespaces with `phasescale score-live` (the simulator's accounting) and compares
# the live VPA's targets with the simulator's VPA recommender (that of `simulate --policy vpa`)
# on what metrics-server served.
# Writes OUT_DIR/summary.json and OUT_DIR/table.txt (and the recordings); prints the table.
# With CHECK=1 (the ctest) it asserts the behaviour; exit 1 on a failed check.
#
# Environment [default]: PODS per namespace [3], SPEED [15], RECORD seconds [150], START_CPU
# [500m], START_MEM [512Mi], VPA_MODE [InPlaceOrRecreate], LOOP (recommender, updater and
# operator tick, metrics-server resolution; above 10s, its kubelet timeout) [15s], SCRAPE
# (Prometheus) [5s], TORCH (torch runs among the executions, at most 6) [2], TORCH_DIR
# [../shared/data/torch], SEED [5], TOLERANCE (VPA histogram buckets) [1], AUTOSCALERS_FIRST
# (the VPA and the PhaseAutoscaler before the pods, not once they run) [0], CHECK [0], KEEP=1
# keeps the work directory.
set -euo pipefail

cli=$1 operator=$2 replay=$3 out=$4
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pods=${PODS:-3} speed=${SPEED:-15} record=${RECORD:-150}
start_cpu=${START_CPU:-500m} start_mem=${START_MEM:-512Mi}
vpa_mode=${VPA_MODE:-InPlaceOrRecreate} loop=${LOOP:-15s} scrape=${SCRAPE:-5s}
torch=${TORCH:-2} seed=${SEED:-5} tolerance=${TOLERANCE:-1} checking=${CHECK:-0}
loop_s=${loop%s}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/phasescale-vpa-compare-XXXXXX)
vpa_started=0
# shellcheck source=../lib.sh
source "$root/tests/lib.sh"  # check, summary, wait_for, start_bg, stop_all_bg, start_testenv, free_port, ...

cleanup() {
    local rc=$?
    stop_all_bg
    ((vpa_started)) && "$root/tests/vpa-live/stop.sh" "$work/vpa" > /dev/null 2>&1 || true
    stop_testenv
    keep_or_remove "$work" "$rc"
}
on_exit cleanup

# ------------------------------------------------------------------ the trace
# torch runs first (real PyTorch), then generated jobs; execution #I is pod trainer-I.
traces=()
mapfile -t torch_runs < <(ls "${TORCH_DIR:-$root/../shared/data/torch}"/dev0*.csv | head -n "$torch")
((${#torch_runs[@]} < pods)) || torch_runs=("${torch_runs[@]:0:pods-1}")
traces+=("${torch_runs[@]}")
"$cli" generate --jobs $((pods - ${#torch_runs[@]})) --seed "$seed" --out "$work/generated.csv" > /dev/null
traces+=("$work/generated.csv")
trace_list=$(IFS=,; echo "${traces[*]}")
pod_map=$(for ((i = 0; i < pods; i++)); do printf '#%d=trainer-%d,' "$i" "$i"; done)
pod_map=${pod_map%,}

# ------------------------------------------------------------------ control plane, VPA
cat > "$work/audit-policy.yaml" << 'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
YAML
log "control plane (2 KWOK nodes) with an audit log"
start_testenv "$work/testenv" PHASESCALE_TESTENV_NODES=2 PHASESCALE_TESTENV_SCHEDULER=0 \
    PHASESCALE_TESTENV_NODE_PODS=$((pods + 20)) PHASESCALE_TESTENV_NODE_CPU=$((pods * 64 + 64)) \
    PHASESCALE_TESTENV_NODE_MEMORY=$((pods * 256 + 256))Gi \
    PHASESCALE_TESTENV_APISERVER_ARGS="--audit-policy-file=$work/audit-policy.yaml --audit-log-path=$work/audit.log"
log "metrics-server and the VPA (loops $loop)"
vpa_env=$(PHASESCALE_VPA_LIVE_METRIC_RESOLUTION=$loop PHASESCALE_VPA_LIVE_RECOMMENDER_INTERVAL=$loop \
    PHASESCALE_VPA_LIVE_UPDATER_INTERVAL=$loop PHASESCALE_VPA_LIVE_OWNER_PID=$$ \
    "$root/tests/vpa-live/start.sh" "$work/vpa")
vpa_started=1
# shellcheck disable=SC1090
source "$vpa_env"

# ------------------------------------------------------------------ exporters: kubelets and Prometheus targets
namespaces=(cmp-vpa cmp-phase)
prom_ports=() kubelet_ports=()
for i in 0 1; do
    prom_ports+=("$(free_port)")
    kubelet_ports+=("$(free_port)")
    start_kubelet_exporter "$replay" "$work/exporter-$i.log" "${prom_ports[$i]}" "${kubelet_ports[$i]}" \
        --trace "$trace_list" --namespace "${namespaces[$i]}" --speed "$speed" --loop --pod-map "$pod_map" ||
        { log "exporter $i not up"; exit 1; }
    "$root/tests/vpa-live/point-node.sh" "kwok-node-$i" "${kubelet_ports[$i]}"
done
# The unix time of each exporter's trace time 0, from its own clock (phasescale_replay_trace_seconds).
replay_start() {
    local before after trace
    before=$(date +%s.%N)
    trace=$(curl -fsS "http://127.0.0.1:$1/metrics" | awk '$1 == "phasescale_replay_trace_seconds" {print $2}')
    after=$(date +%s.%N)
    awk -v b="$before" -v a="$after" -v t="$trace" -v s="$speed" 'BEGIN {printf "%.3f\n", (a + b) / 2 - t / s}'
}
starts=()
for i in 0 1; do starts+=("$(replay_start "${prom_ports[$i]}")"); done
prom_port=$(free_port)
PROM_SCRAPE_INTERVAL=$scrape start_prometheus "$work/prom" "$prom_port" "127.0.0.1:${prom_ports[1]}" || { log "Prometheus not ready"; exit 1; }

# ------------------------------------------------------------------ namespaces, StatefulSets, autoscalers
kubectl apply -f "$root/crds/" > /dev/null
wait_established phaseautoscalers.phasescale.io
statefulset() {  # statefulset NAMESPACE NODE
    cat << YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: trainer, namespace: $1}
spec:
  replicas: $pods
  podManagementPolicy: Parallel
  serviceName: trainer
  selector: {matchLabels: {app: train}}
  template:
    metadata: {labels: {app: train}}
    spec:
      nodeName: $2
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
        - name: main
          image: trainer
          resources:
            requests: {cpu: "$start_cpu", memory: $start_mem}
            limits: {cpu: "$start_cpu", memory: $start_mem}
YAML
}
for i in 0 1; do
    kubectl create namespace "${namespaces[$i]}" > /dev/null
done
wait_default_sa "${namespaces[@]}"
autoscalers() {
    cat << YAML
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: trainer, namespace: cmp-vpa}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: trainer}
  updatePolicy: {updateMode: $vpa_mode}
---
YAML
    phase_autoscaler cmp-phase InPlace
}

# ------------------------------------------------------------------ pods, recorders, autoscalers
# Both autoscalers once every pod runs at START_CPU/START_MEM, so that both sides start from the
# same requests. With AUTOSCALERS_FIRST=1 they come before the pods, as a workload deployed with
# its VPA: the VPA's admission controller then gives the pods it creates the recommendation of
# that moment (see README.md: with no metrics yet, the minimum 25m/250Mi).
[[ ${AUTOSCALERS_FIRST:-0} != 1 ]] || autoscalers | kubectl apply -f - > /dev/null
# Each recorder in a session of its own, so that stopping it stops its kubectl and jq; what
# they say (a watch started again) in recorders.log.
rec_pids=()
record() {  # record OUT ARGS...: record.sh ARGS > OUT
    local file=$1; shift
    setsid "$root/tests/vpa-compare/record.sh" "$@" > "$file" 2>> "$out/recorders.log" &
    bg_pids+=($!)
    rec_pids+=($!)
}
: > "$out/recorders.log"
# What metrics-server serves from the first pod on: the live recommender's history starts there.
record "$out/metrics-cmp-vpa.jsonl" metrics cmp-vpa
t0=$SECONDS
created=$(date +%s.%N)
statefulset cmp-vpa kwok-node-0 | kubectl apply -f - > /dev/null
statefulset cmp-phase kwok-node-1 | kubectl apply -f - > /dev/null
wait_for 1200 pods_running $((2 * pods)) -A -l app=train || { log "pods not all Running"; exit 1; }
log "$((2 * pods)) pods Running after $((SECONDS - t0)) s"
for ns in "${namespaces[@]}"; do record "$out/pods-$ns.jsonl" pods "$ns"; done
record "$out/vpa.jsonl" vpa cmp-vpa trainer
[[ ${AUTOSCALERS_FIRST:-0} == 1 ]] || autoscalers | kubectl apply -f - > /dev/null

# ------------------------------------------------------------------ the operator
metrics_port=$(free_port)
start_bg "$work/operator.log" "$operator" --prometheus-url "http://127.0.0.1:$prom_port" --tick "$loop" \
    --scrape-interval "$scrape" --namespaces cmp-phase --metrics-addr "127.0.0.1:$metrics_port" --log-level info
op_pid=$bg_pid
wait_for 60 curl -fsS "http://127.0.0.1:$metrics_port/readyz" -o /dev/null 2>/dev/null || { log "operator not ready"; exit 1; }
rec_pid=$PHASESCALE_VPA_LIVE_PID_RECOMMENDER
rec_metrics="http://127.0.0.1:$PHASESCALE_VPA_LIVE_RECOMMENDER_METRICS_PORT/metrics"
op_metrics="http://127.0.0.1:$metrics_port/metrics"

# ------------------------------------------------------------------ the recorded window
metric() {  # metric URL NAME{LABELS}: the sample's value, 0 when absent
    curl -fsS "$1" | awk -v n="$2" 'index($0, n " ") == 1 {v = $2} END {print v + 0}'
}
loop_stats() {  # loop_stats FILE-PREFIX: sums and counts of both loops now
    printf '%s %s %s %s\n' \
        "$(metric "$rec_metrics" 'vpa_recommender_execution_latency_seconds_sum{step="total"}')" \
        "$(metric "$rec_metrics" 'vpa_recommender_execution_latency_seconds_count{step="total"}')" \
        "$(metric "$op_metrics" phasescale_tick_seconds_sum)" \
        "$(metric "$op_metrics" phasescale_tick_seconds_count)"
}
rss_mb() { awk '$1 == "VmRSS:" {printf "%.1f\n", $2 / 1024}' "/proc/$1/status"; }
# RSS columns: the recommender, the operator, then the rest of the VPA (updater, admission
# controller, metrics-server).
rss_pids=("$rec_pid" "$op_pid" "$PHASESCALE_VPA_LIVE_PID_UPDATER" "$PHASESCALE_VPA_LIVE_PID_ADMISSION_CONTROLLER"
    "$PHASESCALE_VPA_LIVE_PID_METRICS_SERVER")
rss_max() {  # rss_max COLUMN: the most that process had over the window, MB
    cut -f "$(($1 + 1))" "$work/rss.tsv" | sort -g | tail -n 1
}
from=$(date +%s.%N)
read -r rsum0 rcount0 osum0 ocount0 <<< "$(loop_stats)"
log "recording $record s from $from (trace starts: ${starts[*]})"
: > "$work/rss.tsv"
while (($(date +%s) < ${from%.*} + record)); do
    { date +%s; for pid in "${rss_pids[@]}"; do rss_mb "$pid"; done; } | paste -s >> "$work/rss.tsv"
    sleep 5
done
to=$(date +%s.%N)
read -r rsum1 rcount1 osum1 ocount1 <<< "$(loop_stats)"
op_resizes=$(metric "$op_metrics" 'phasescale_resizes_total{result="ok"}')
sleep 5  # the resizes of the last moment reach the status
for pid in "${rec_pids[@]}"; do stop_pid "$pid"; done
log "recorded; scoring"

# ------------------------------------------------------------------ scoring
# The VPA's targets against the simulator's VPA recommender (policy::VpaRecommender, that of
# `simulate --policy vpa`) twice: on what metrics-server served (the recommender's own input,
# recorded: the recommender alone) and on the trace as metrics-server would sample it every
# LOOP (score-live --served-trace: the recommender and the sampling). Both as one execution,
# each row naming its pod (column container): the VPA keeps one aggregate state for all pods
# of the StatefulSet, and a ContainerState (memory peaks) per pod.
served_by_metrics_server() {  # the recording as a trace: one row per pod and metrics timestamp
    jq -rs 'def q: if endswith("n") then (.[:-1] | tonumber) / 1e9 elif endswith("u") then (.[:-1] | tonumber) / 1e6
                   elif endswith("m") then (.[:-1] | tonumber) / 1e3 elif endswith("Ki") then (.[:-2] | tonumber) * 1024
                   elif endswith("Mi") then (.[:-2] | tonumber) * 1048576 elif endswith("Gi") then (.[:-2] | tonumber) * 1073741824
                   else tonumber end;
        "pod.id,timestamp,cpu.usage.cores,mem.working.set,container",
        (unique_by([.pod, .timestamp]) | map(. + {i: (.pod | ltrimstr("trainer-") | tonumber)})
         | map(. + {s: ((.timestamp | fromdateiso8601) + 0.001 * .i)})
         | sort_by(.s)[] | "aggregate,\(.s),\(.cpu | q),\(.memory | q),\(.i)")' "$out/metrics-cmp-vpa.jsonl"
}
served_by_metrics_server > "$out/metrics-server-cmp-vpa.csv"
replayed=(--trace "$trace_list" --speed "$speed" --loop --pod-map "$pod_map")
common=("${replayed[@]}" --from "$from" --to "$to")
"$cli" score-live "${replayed[@]}" --from "$created" --to "$to" --namespace cmp-vpa --start "${starts[0]}" --pods "$out/pods-cmp-vpa.jsonl" \
    --served-trace "$out/served-cmp-vpa.csv" --resolution "$loop_s" > /dev/null
for input in metrics-server served; do
    "$cli" score-live "${common[@]}" --namespace cmp-vpa --start "${starts[0]}" --pods "$out/pods-cmp-vpa.jsonl" \
        --vpa "$out/vpa.jsonl" --vpa-input "$out/$input-cmp-vpa.csv" --lag $((2 * loop_s + 5)) \
        --json "$out/score-cmp-vpa-$input.json" > "$work/table-vpa.txt"
done
cp "$out/score-cmp-vpa-metrics-server.json" "$out/score-cmp-vpa.json"
# The VPA's requests over time against `simulate --policy vpa-updater` (the recommender and the
# updater's rules, its loop 60 s) on the same input, from the same start: the changes of each
# (the live ones of trainer-0; the updater gives all pods of the workload the same target).
# KWOK's pods run no cgroups: metrics-server served CPU above the limits (--cpu-uncapped).
"$cli" simulate --trace "$out/metrics-server-cmp-vpa.csv" --policy vpa-updater --cpu-uncapped --static-cpu "$start_cpu" \
    --static-memory "$start_mem" --json "$work/updater.json" --allocations "$out/simulated-vpa-updater.csv" > /dev/null
awk -F, '$1 == "vpa-updater" && ($5 != c || $6 != m) {c = $5; m = $6; printf "[%s,%s,%s]\n", $4, $5, $6}' \
    "$out/simulated-vpa-updater.csv" | jq -s . > "$work/updater-changes.json"
jq -s 'def q: if test("m$") then (.[:-1] | tonumber) / 1000 elif test("Ki$") then (.[:-2] | tonumber) * 1024
               elif test("Mi$") then (.[:-2] | tonumber) * 1048576 elif test("Gi$") then (.[:-2] | tonumber) * 1073741824
               else tonumber end;
    map(select(.pod == "trainer-0" and .type != "DELETED") | [.t, (.requests.cpu | q), (.requests.memory | q)])
    | reduce .[] as $x ([]; if length > 0 and (.[-1][1:] == $x[1:]) then . else . + [$x] end)' \
    "$out/pods-cmp-vpa.jsonl" > "$work/live-changes.json"
"$cli" score-live "${common[@]}" --namespace cmp-phase --start "${starts[1]}" --pods "$out/pods-cmp-phase.jsonl" \
    --json "$out/score-cmp-phase.json" > "$work/table-phase.txt"

# API requests per minute by client (the audit log's user agent up to its first "/"), in the window.
minutes=$(awk -v f="$from" -v t="$to" 'BEGIN {print (t - f) / 60}')
jq -r --argjson f "$from" --argjson t "$to" 'select(.stageTimestamp != null)
        | (.stageTimestamp | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) as $s
        | select($s >= $f and $s <= $t) | (.userAgent // "-" | split("/")[0])' "$work/audit.log" |
    sort | uniq -c | awk -v m="$minutes" '{printf "%s\t%d\t%.1f\n", $2, $1, $1 / m}' > "$out/api-requests.tsv"
# And by client, verb and resource (what each spends its requests on).
jq -r --argjson f "$from" --argjson t "$to" 'select(.stageTimestamp != null)
        | (.stageTimestamp | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) as $s
        | select($s >= $f and $s <= $t)
        | "\(.userAgent // "-" | split("/")[0]) \(.verb) \(.objectRef.resource // "-")\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end)"' \
    "$work/audit.log" | sort | uniq -c | sort -k2,2 -k1,1nr |
    awk -v m="$minutes" '{printf "%s\t%s\t%s\t%d\t%.1f\n", $2, $3, $4, $1, $1 / m}' > "$out/api-requests-by-verb.tsv"
api_rate() { awk -v a="$1" '$1 == a {r = $3} END {print r + 0}' "$out/api-requests.tsv"; }

jq -n --slurpfile v "$out/score-cmp-vpa.json" --slurpfile vt "$out/score-cmp-vpa-served.json" \
    --slurpfile live "$work/live-changes.json" --slurpfile upd "$work/updater-changes.json" --slurpfile p "$out/score-cmp-phase.json" \
    --argjson pods "$pods" --argjson speed "$speed" --arg loop "$loop" --arg mode "$vpa_mode" \
    --arg start "$start_cpu/$start_mem" --argjson window "$(awk -v f="$from" -v t="$to" 'BEGIN {print t - f}')" \
    --argjson rsum "$(awk -v a="$rsum0" -v b="$rsum1" 'BEGIN {print b - a}')" \
    --argjson rcount "$(awk -v a="$rcount0" -v b="$rcount1" 'BEGIN {print b - a}')" \
    --argjson osum "$(awk -v a="$osum0" -v b="$osum1" 'BEGIN {print b - a}')" \
    --argjson ocount "$(awk -v a="$ocount0" -v b="$ocount1" 'BEGIN {print b - a}')" \
    --argjson rrss "$(rss_max 1)" --argjson orss "$(rss_max 2)" \
    --argjson urss "$(rss_max 3)" --argjson arss "$(rss_max 4)" --argjson mrss "$(rss_max 5)" \
    --argjson rapi "$(api_rate recommender)" --argjson uapi "$(api_rate updater)" \
    --argjson aapi "$(api_rate admission-controller)" --argjson mapi "$(api_rate metrics-server)" \
    --argjson oapi "$(api_rate phasescale)" '
    def side(s): {allocated_core_hours: (s.total.score.cpu.allocated / 3600),
        allocated_gib_hours: (s.total.score.memory.allocated / 3600 / 1073741824),
        cpu_fulfilment: s.total.score.cpu.fulfilment, cpu_shortfall_core_hours: (s.total.score.cpu.shortfall / 3600),
        oom_kills: s.total.score.memory.oom_kills, resizes: s.total.resizes,
        resizes_in_status: s.total.resizes_in_status, recreations: (s.total.recreations + s.total.deletions)};
    {pods_per_namespace: $pods, speed: $speed, loop: $loop, vpa_mode: $mode, start: $start,
     window_seconds: $window,
     vpa: (side($v[0]) + {loop_seconds_mean: (if $rcount > 0 then $rsum / $rcount else null end), loops: $rcount,
            rss_mb_max: $rrss, rss_mb_max_others: {updater: $urss, "admission-controller": $arss,
            "metrics-server": $mrss}, api_requests_per_minute: {recommender: $rapi, updater: $uapi,
            "admission-controller": $aapi, "metrics-server": $mapi}}),
     phasescale: (side($p[0]) + {loop_seconds_mean: (if $ocount > 0 then $osum / $ocount else null end), loops: $ocount,
            rss_mb_max: $orss, api_requests_per_minute: {"phasescale-operator": $oapi}}),
     fidelity: $v[0].vpa, fidelity_trace_sampled: $vt[0].vpa,
     requests_over_time: {live_trainer_0: $live[0], simulate_vpa_updater: $upd[0]}}' > "$out/summary.json"

{
    echo "pods per namespace $pods, speed $speed, loops $loop, VPA $vpa_mode, start $start_cpu/$start_mem, window $(jq .window_seconds "$out/summary.json") s"
    cat "$work/table-vpa.txt"
    tail -n 1 "$work/table-phase.txt"
    jq -r '"loop s mean: VPA recommender \(.vpa.loop_seconds_mean) (\(.vpa.loops) loops), phasescale tick \(.phasescale.loop_seconds_mean) (\(.phasescale.loops) ticks)",
        "RSS MB max: VPA recommender \(.vpa.rss_mb_max) (others \(.vpa.rss_mb_max_others)), phasescale-operator \(.phasescale.rss_mb_max)",
        "API requests/min: VPA \(.vpa.api_requests_per_minute), phasescale \(.phasescale.api_requests_per_minute)",
        "VPA target vs the simulator'"'"'s on what metrics-server served (buckets): cpu \(.fidelity.cpu), memory \(.fidelity.memory)",
        "  on the trace sampled every loop (buckets): cpu \(.fidelity_trace_sampled.cpu), memory \(.fidelity_trace_sampled.memory)"' "$out/summary.json"
} | tee "$out/table.txt"

[[ $checking == 1 ]] || exit 0

# ------------------------------------------------------------------ checks (the ctest)
v=$out/score-cmp-vpa.json p=$out/score-cmp-phase.json
check "phasescale resized pods in place" test "$(jq .total.resizes "$p")" -ge 1
check "every phasescale resize reached the pod's status" test "$(jq .total.resizes "$p")" == "$(jq .total.resizes_in_status "$p")"
# The operator's own count (since it started, just before the window) against the watch's: a
# watch that lost events sees fewer; the counter may lag the last tick's resizes (one per pod).
check "the watch saw the resizes phasescale counts ($op_resizes)" awk -v w="$(jq .total.resizes "$p")" -v o="$op_resizes" \
    -v n="$pods" 'BEGIN {exit !(w >= 0.95 * o - 2 && w <= o + n)}'
check "phasescale re-created no pod" test "$(jq '.total.recreations + .total.deletions' "$p")" == 0
check "every VPA in-place resize reached the pod's status" test "$(jq .total.resizes "$v")" == "$(jq .total.resizes_in_status "$v")"
# The updater's rule for pods younger than 12 h: a pod is updated only when its request is
# outside [lowerBound, upperBound] (no OOM kill happens on KWOK), and one that stays outside
# for three updater loops is updated.
# Outside for a second of the window, or, for a record of the bounds, at some time since the
# record before (the updater may act within a second of the recommender's write, between two
# points of the 1 s grid, and before the recorder's watch delivers the write).
check "the VPA updated only pods outside its bounds" test "$(jq '[.pods[] | select(.resizes + .recreations + .deletions > 0 and .outside_vpa_bounds.seconds == 0 and .outside_vpa_bounds.at_records == 0)] | length' "$v")" == 0
check "the VPA updated every pod that stayed outside its bounds for 3 loops" \
    test "$(jq --argjson l "$((3 * loop_s + 5))" '[.pods[] | select(.outside_vpa_bounds.longest_seconds > $l and .resizes + .recreations + .deletions == 0)] | length' "$v")" == 0
# Allocation integrates what was requested: the requests of the watch integrated over wall
# time (a step function) times the speed give the allocation score-live scored per sample.
integral() {  # integral FILE: sum over pods of the CPU request integrated over [from, to], in trace core-seconds
    jq -s --argjson f "$from" --argjson t "$to" --argjson s "$speed" '
        def cores: if test("m$") then (.[:-1] | tonumber) / 1000 else tonumber end;
        group_by(.pod) | map(sort_by(.t) as $e | [range(0; $e | length)] | map(
            ($e[.]) as $x | (if . + 1 < ($e | length) then $e[. + 1].t else $t end) as $next
            | (if $x.type == "DELETED" then 0 else ($x.requests.cpu | cores) end)
              * ([([$next, $t] | min) - ([$x.t, $f] | max), 0] | max)) | add) | add * $s' "$1"
}
for ns in vpa phase; do
    s=$out/score-cmp-$ns.json
    check "cmp-$ns: allocation integrates the recorded requests (within 5%)" awk -v a="$(jq .total.score.cpu.allocated "$s")" \
        -v b="$(integral "$out/pods-cmp-$ns.jsonl")" 'BEGIN {exit !(b > 0 && (a - b) / b < 0.05 && (b - a) / b < 0.05)}'
done
check "the VPA recommended, compared at 3 scrapes at least" test "$(jq .fidelity.cpu.compared "$out/summary.json")" -ge 3
check "VPA CPU target within $tolerance buckets of the simulator's" test "$(jq .fidelity.cpu.max_buckets "$out/summary.json")" -le "$tolerance"
check "VPA memory target within $tolerance buckets of the simulator's" test "$(jq .fidelity.memory.max_buckets "$out/summary.json")" -le "$tolerance"
summary vpa-compare
