#!/usr/bin/env bash
# Scale benchmark of phasescale-operator (issue 5, "Must show", second bullet).
#
#   bash bench/scale/run.sh [PODS] [AUTOSCALERS]        # defaults 5000 and 10
#
# Starts the control plane of tests/testenv (KWOK nodes, 110 pods each, enough for PODS),
# makes AUTOSCALERS namespaces, each with one PhaseAutoscaler (InPlace and Recommend
# alternately) and PODS/AUTOSCALERS Running pods (spec.nodeName set, created with one
# multi-document `kubectl create` per namespace), serves cAdvisor-style metrics for every
# container with one tools/replay-exporter per namespace (a `phasescale generate` trace, one
# job per pod, --pod-map), has a real Prometheus scrape them, then runs phasescale-operator
# for TICKS ticks and measures, per tick: its duration (the operator's debug "tick" log line,
# = phasescale_tick_seconds), Prometheus queries (the log line's prometheus_queries and the
# delta of phasescale_prometheus_request_seconds_count), Kubernetes API requests (the delta
# of phasescale_kube_request_seconds_count, by verb: the writes sent between two snapshots),
# the writes the tick queued (pod marks + resizes + status) and those still waiting when it
# ended, and the operator's VmRSS/VmHWM (/proc/PID/status). Prints a table and a summary;
# everything started is stopped at the end.
#
# It also reads the operator's open file descriptors, threads and established TCP connections
# each tick, and ends with the drift of RSS, descriptors, connections, threads and tick time
# between the second and the last quarter of the ticks (the first quarter fills the trackers);
# with MAX_RSS_DRIFT (percent) set, it fails when RSS grew more than that, descriptors other than
# connections or threads by more than 2, or connections ever passed the first tick's by more
# than one per write worker: the soak (bench/soak.sh).
#
# Environment: BUILD (build dir, default build-scale), TICK (default 15s), TICKS (default 5),
# SCRAPE (Prometheus scrape interval, default 5s), KEEP=1 keeps the work directory;
# KUBE_QPS, KUBE_BURST, WRITE_WORKERS pass --kube-qps, --kube-burst, --write-workers (the
# operator's defaults otherwise); LOANS=1 passes --capacity-loans (the loan controller's
# informers beside the control loop's).
set -euo pipefail

pods_total=${1:-5000}
autoscalers=${2:-10}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$root/build-scale}
[[ $build = /* ]] || build=$root/$build
tick=${TICK:-15s}
ticks=${TICKS:-5}
scrape=${SCRAPE:-5s}
operator=$build/operator/phasescale-operator
replay=$build/tools/replay-exporter/phasescale-replay-exporter
cli=$build/cli/phasescale
for b in "$operator" "$replay" "$cli"; do [[ -x $b ]] || { echo "missing $b (ninja -C $build phasescale phasescale-operator phasescale-replay-exporter)" >&2; exit 2; }; done
command -v prometheus > /dev/null || { echo "prometheus not on PATH (apt-get install prometheus)" >&2; exit 2; }

per_ns=$(( (pods_total + autoscalers - 1) / autoscalers ))
nodes=$(( (pods_total + 109) / 110 ))
(( nodes < 3 )) && nodes=3
work=$(mktemp -d /tmp/phasescale-scale-XXXXXX)
# shellcheck source=../../tests/lib.sh
source "$root/tests/lib.sh"  # wait_for, start_bg, stop_all_bg, start_testenv, free_port, start_exporter, start_prometheus

cleanup() {
    local rc=$?
    stop_all_bg
    stop_testenv
    keep_or_remove "$work" "$rc"
}
on_exit cleanup

# ------------------------------------------------------------------ control plane
log "control plane: $nodes KWOK nodes (110 pods each), no kube-scheduler"
start_testenv "$work/testenv" PHASESCALE_TESTENV_NODES="$nodes" PHASESCALE_TESTENV_SCHEDULER=0
kubectl apply -f "$root/crds/" > /dev/null
wait_established phaseautoscalers.phasescale.io

# ------------------------------------------------------------------ namespaces, pods, autoscalers
namespaces=()
for ((a = 0; a < autoscalers; a++)); do namespaces+=("scale-$a"); done
t0=$SECONDS
for ((a = 0; a < autoscalers; a++)); do
    ns=${namespaces[$a]}
    mode=$([[ $((a % 2)) == 0 ]] && echo InPlace || echo Recommend)
    {
        printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns"
        printf -- '---\napiVersion: phasescale.io/v1alpha1\nkind: PhaseAutoscaler\nmetadata: {name: trainers, namespace: %s}\n' "$ns"
        printf 'spec:\n  selector: {matchLabels: {app: train}}\n  mode: %s\n' "$mode"
        printf '  containerPolicies:\n    - {containerName: "*", minAllowed: {cpu: 10m, memory: 64Mi}, maxAllowed: {cpu: "4", memory: 8Gi}}\n'
    } > "$work/ns-$a.yaml"
    for ((i = 0; i < per_ns; i++)); do
        n=$(( (a * per_ns + i) % nodes ))
        printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: trainer-%d, namespace: %s, labels: {app: train}}\n' "$i" "$ns"
        printf 'spec:\n  nodeName: kwok-node-%d\n  automountServiceAccountToken: false\n' "$n"
        printf '  containers:\n    - name: main\n      image: trainer\n      resources:\n        requests: {cpu: 50m, memory: 128Mi}\n'
    done > "$work/pods-$a.yaml"
done
for ((a = 0; a < autoscalers; a++)); do kubectl apply -f "$work/ns-$a.yaml" > /dev/null; done
# the default service account of each namespace (kube-controller-manager) before any pod
wait_default_sa "${namespaces[@]}"
printf '%s\n' "${namespaces[@]}" | xargs -P 2 -I{} sh -c 'kubectl create -f "$1" > /dev/null' _ "$work/pods-{}.yaml" 2>/dev/null ||
    for ((a = 0; a < autoscalers; a++)); do kubectl create -f "$work/pods-$a.yaml" > /dev/null; done
log "created $((per_ns * autoscalers)) pods in $((SECONDS - t0)) s"
running() {
    local n
    n=$(running_pods -A)
    log "  Running: $n"
    (( n >= per_ns * autoscalers ))
}
wait_for 900 running || { log "pods not all Running"; exit 1; }
log "all $((per_ns * autoscalers)) pods Running after $((SECONDS - t0)) s"

# ------------------------------------------------------------------ metrics: exporters and Prometheus
"$cli" generate --jobs "$per_ns" --seed 7 --out "$work/trace.csv" > /dev/null
pod_map=$(for ((i = 0; i < per_ns; i++)); do printf '#%d=trainer-%d,' "$i" "$i"; done)
pod_map=${pod_map%,}
targets=()
for ((a = 0; a < autoscalers; a++)); do
    port=$(free_port)
    start_exporter "$replay" "$work/exporter-$a.log" "$port" --trace "$work/trace.csv" --namespace "${namespaces[$a]}" \
        --speed 3 --loop --pod-map "$pod_map" || { log "exporter $a not up"; exit 1; }
    targets+=("127.0.0.1:$port")
done
prom_port=$(free_port)
PROM_SCRAPE_INTERVAL=$scrape start_prometheus "$work/prom" "$prom_port" "${targets[@]}" || { log "Prometheus not ready"; exit 1; }
series_ready() {
    local n
    n=$(sampled_containers "$prom_port" 'scale-.*' 2m 3)
    log "  series with 3 samples: $n"
    (( n >= per_ns * autoscalers ))
}
wait_for 300 series_ready || { log "Prometheus lacks samples"; exit 1; }

# ------------------------------------------------------------------ the operator
metrics_port=$(free_port)
"$operator" --prometheus-url "http://127.0.0.1:$prom_port" --tick "$tick" --scrape-interval "$scrape" \
    --namespaces "$(IFS=,; echo "${namespaces[*]}")" --metrics-addr "127.0.0.1:$metrics_port" \
    ${KUBE_QPS:+--kube-qps "$KUBE_QPS"} ${KUBE_BURST:+--kube-burst "$KUBE_BURST"} \
    ${WRITE_WORKERS:+--write-workers "$WRITE_WORKERS"} ${LOANS:+--capacity-loans} \
    --log-level debug > "$work/operator.log" 2>&1 &
op=$!
bg_pids+=($op)
started=$SECONDS
wait_for 120 curl -fsS "http://127.0.0.1:$metrics_port/readyz" -o /dev/null 2>/dev/null || { log "operator not ready"; exit 1; }
log "operator ready (caches synced) after $((SECONDS - started)) s; pid $op"

metric_sum() {  # metric_sum FILE NAME_REGEX: sum of the samples whose name matches
    awk -v re="$2" '$1 ~ re {s += $NF} END {printf "%d\n", s}' "$1"
}
scrape_metrics() { curl -fsS "http://127.0.0.1:$metrics_port/metrics" > "$1"; }
ticks_done() { awk '/^phasescale_ticks_total/ {printf "%d\n", $2}' "$1"; }
vm() { awk -v k="$1:" '$1 == k {printf "%.1f\n", $2 / 1024}' "/proc/$op/status"; }
fds() { find "/proc/$op/fd" -mindepth 1 -maxdepth 1 | wc -l; }
threads() { awk '$1 == "Threads:" {print $2}' "/proc/$op/status"; }
# Its established TCP connections (the kernel's table of them, matched to its socket descriptors):
# the HTTP clients keep idle connections for a while and open one per concurrent request, so
# their number follows how many writes overlap, which a leak of other descriptors does not.
conns() {
    local inodes t tables=()
    inodes=$(find "/proc/$op/fd" -mindepth 1 -maxdepth 1 -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n')
    for t in "/proc/$op/net/tcp" "/proc/$op/net/tcp6"; do [[ -r $t ]] && tables+=("$t"); done  # tcp6: IPv6 on
    ((${#tables[@]})) || { echo 0; return; }
    awk -v list="$inodes" 'BEGIN { n = split(list, a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1 }
        FNR > 1 && $4 == "01" && ($10 in want) { c++ } END { print c + 0 }' "${tables[@]}"
}

scrape_metrics "$work/m-0.prom"
prev=$work/m-0.prom
printf '%-5s %-9s %-9s %-10s %-8s %-8s %-10s %-36s %-9s %-9s %-5s %-7s %-5s\n' tick seconds prom_q prom_req queued waiting api_req "api by verb" rss_MB hwm_MB fds threads conns | tee "$work/table.txt"
for ((k = 1; k <= ticks; k++)); do
    want=$(( $(ticks_done "$prev") + 1 ))
    until scrape_metrics "$work/m-$k.prom" && (( $(ticks_done "$work/m-$k.prom") >= want )); do sleep 0.2; done
    cur=$work/m-$k.prom
    line=$(grep '"msg":"tick"\|"message":"tick"' "$work/operator.log" | sed -n "${want}p")
    secs=$(jq -r '.seconds' <<< "$line" 2>/dev/null || echo ?)
    pq=$(jq -r '.prometheus_queries' <<< "$line" 2>/dev/null || echo ?)
    queued=$(jq -r '.pod_patches + .resizes + .status_updates' <<< "$line" 2>/dev/null || echo ?)
    waiting=$(jq -r '.writes_waiting' <<< "$line" 2>/dev/null || echo ?)
    preq=$(( $(metric_sum "$cur" '^phasescale_prometheus_request_seconds_count') - $(metric_sum "$prev" '^phasescale_prometheus_request_seconds_count') ))
    api=$(( $(metric_sum "$cur" '^phasescale_kube_request_seconds_count') - $(metric_sum "$prev" '^phasescale_kube_request_seconds_count') ))
    verbs=$(join -a1 -e0 -o 0,1.2,2.2 \
        <(awk '/^phasescale_kube_request_seconds_count/ {match($0, /verb="[^"]*"/); print substr($0, RSTART+6, RLENGTH-7), $NF}' "$cur" | sort) \
        <(awk '/^phasescale_kube_request_seconds_count/ {match($0, /verb="[^"]*"/); print substr($0, RSTART+6, RLENGTH-7), $NF}' "$prev" | sort) |
        awk '$2 - $3 > 0 {printf "%s%s=%d", sep, $1, $2 - $3; sep=","}')
    printf '%-5s %-9.3f %-9s %-10s %-8s %-8s %-10s %-36s %-9s %-9s %-5s %-7s %-5s\n' "$want" "$secs" "$pq" "$preq" "$queued" "$waiting" "$api" "${verbs:--}" "$(vm VmRSS)" "$(vm VmHWM)" "$(fds)" "$(threads)" "$(conns)" | tee -a "$work/table.txt"
    prev=$cur
done
log "pods tracked: $(awk '/^phasescale_pods_tracked/ {print $2}' "$prev"); resizes: $(grep '^phasescale_resizes_total' "$prev" | tr '\n' ' ')"
grep '"tick"' "$work/operator.log" | tail -n 2 >&2 || true
echo "operator warnings/errors in log: $(grep -c '"level":"error"\|"level":"warning"' "$work/operator.log" || true)" >&2
echo "pods=$((per_ns * autoscalers)) autoscalers=$autoscalers nodes=$nodes tick=$tick scrape=$scrape cores=$(nproc)"

# Drift: the mean of the last quarter of the ticks against that of the second quarter. Descriptors
# other than connections must not drift; connections come and go with the writes in flight, but
# never more than one per write worker beyond those of the first tick.
awk -v max_rss="${MAX_RSS_DRIFT:-}" -v workers="${WRITE_WORKERS:-8}" '
    NR == 1 { next }
    {
        n++; secs[n] = $2; rss[n] = $9; fd[n] = $11; th[n] = $12; cn[n] = $13; other[n] = $11 - $13
        if ($11 > fd_max) fd_max = $11
        if ($13 > cn_max) cn_max = $13
    }
    function mean(a, from, to,   i, s) { s = 0; for (i = from; i <= to; i++) s += a[i]; return s / (to - from + 1) }
    function drift(name, a, from1, to1, from2, to2,   m1, m2, pct) {
        m1 = mean(a, from1, to1); m2 = mean(a, from2, to2)
        pct = m1 > 0 ? 100 * (m2 - m1) / m1 : 0
        printf "drift %-10s ticks %d-%d: %.3f, ticks %d-%d: %.3f (%+.1f%%)\n", name, from1, to1, m1, from2, to2, m2, pct
        return m2 - m1
    }
    END {
        q = int(n / 4); if (q < 1) { print "drift: too few ticks"; exit 0 }
        a = q + 1; b = 2 * q; c = n - q + 1
        bad = 0
        drift("tick_s", secs, a, b, c, n)
        up = drift("rss_MB", rss, a, b, c, n)
        if (max_rss != "" && up > max_rss / 100 * mean(rss, a, b)) bad = 1
        drift("fds", fd, a, b, c, n)
        drift("conns", cn, a, b, c, n)
        if (max_rss != "" && drift("other_fds", other, a, b, c, n) > 2) bad = 1  # a descriptor more or less is no leak
        if (max_rss != "" && drift("threads", th, a, b, c, n) > 2) bad = 1
        # A leak that levels off (idle connections closed after a while) shows no drift between
        # quarters, but many more descriptors than the first tick had.
        printf "descriptors: %d at the first tick, at most %d; connections: %d at the first tick, at most %d (%d write workers)\n", fd[1], fd_max, cn[1], cn_max, workers
        if (max_rss != "" && (fd_max > 2 * fd[1] + 10 || cn_max > cn[1] + workers)) bad = 1
        if (bad) { print "FAIL: the operator drifts (RSS beyond " max_rss "%, more descriptors other than connections or more threads, descriptors past twice the first tick'"'"'s, or connections past one per write worker more than the first tick'"'"'s)"; exit 1 }
    }' "$work/table.txt"
