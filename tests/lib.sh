# Shell helpers of the tests and benchmarks that start processes (sourced, not run): checks
# that count, bounded waits, background processes that are always stopped, free loopback
# ports, a real Prometheus scraping replay exporters. Used by tests/e2e/e2e.sh,
# tests/helm/*.sh (through tests/helm/lib.sh) and bench/scale/run.sh.

# ---------------------------------------------------------------- checks

failures=0
passed=0
check() {  # check DESCRIPTION COMMAND...: run COMMAND, count and print ok/FAIL
    local what=$1; shift
    if "$@"; then
        echo "ok: $what"; passed=$((passed + 1))
    else
        echo "FAIL: $what"; failures=$((failures + 1))
    fi
}
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds; 1 on timeout
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        ((SECONDS >= deadline)) && return 1
        sleep 0.5
    done
}
wait_established() {  # wait_established CRD...: until every named CRD is Established
    # (kubectl wait fails at once, "accessor error", while a new CRD has no status.conditions)
    wait_for 60 kubectl wait --for=condition=Established --timeout=5s "${@/#/crd/}" > /dev/null 2>&1
}
summary() {  # summary NAME: the closing line, and the exit status
    echo "$1: $passed passed, $failures failed"
    [[ $failures == 0 ]]
}

# ---------------------------------------------------------------- processes

bg_pids=()
start_bg() {  # start_bg LOG CMD...: run CMD in the background, output to LOG; sets bg_pid
    local log=$1; shift
    "$@" > "$log" 2>&1 &
    bg_pid=$!
    bg_pids+=("$bg_pid")
}
stop_pid() {  # stop_pid PID: SIGTERM, SIGKILL after 5 s; waits for it
    local pid=$1
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
stop_all_bg() {  # every process start_bg started
    local pid
    for pid in "${bg_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${bg_pids[@]}"; do stop_pid "$pid"; done
    bg_pids=()
}

free_port() {  # a TCP port nothing listens on (20000-29999)
    local p
    while :; do
        p=$((20000 + RANDOM % 10000))
        ss -ltnH "sport = :$p" | grep -q . || { echo "$p"; return; }
    done
}

# ---------------------------------------------------------------- Prometheus and metrics

# start_prometheus DIR PORT TARGET...: a real Prometheus scraping TARGETs (host:port) every
# ${PROM_SCRAPE_INTERVAL:-1s}, data and prometheus.log in DIR; waits until it is ready.
trainer_pod() {  # trainer_pod NAME NAMESPACE NODE CPU MEMORY: the YAML of a Guaranteed pod
    # labelled app=train on NODE, one container "main" with CPU and MEMORY as requests and limits
    cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $2, labels: {app: train}}
spec:
  nodeName: $3
  containers:
    - name: main
      image: trainer
      resources:
        requests: {cpu: "$4", memory: $5}
        limits: {cpu: "$4", memory: $5}
YAML
}
start_prometheus() {
    local dir=$1 port=$2; shift 2
    local targets="" t interval=${PROM_SCRAPE_INTERVAL:-1s} timeout=900ms
    for t in "$@"; do targets+="${targets:+, }'$t'"; done
    [[ $interval == 1s ]] || timeout=$interval
    mkdir -p "$dir"
    cat > "$dir/prometheus.yml" <<YAML
global:
  scrape_interval: $interval
  scrape_timeout: $timeout
  evaluation_interval: $interval
scrape_configs:
  - job_name: replay
    honor_labels: true
    static_configs:
      - targets: [$targets]
YAML
    start_bg "$dir/prometheus.log" prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$port" --log.level=warn
    wait_for 30 curl -fsS "http://127.0.0.1:$port/-/ready" -o /dev/null 2>/dev/null
}
prom_query() {  # prom_query PORT PROMQL: the JSON answer of an instant query
    curl -fsS "http://127.0.0.1:$1/api/v1/query" --data-urlencode "query=$2"
}
