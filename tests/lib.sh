# Shell helpers of the tests and benchmarks that start processes (sourced, not run): checks
# that count, bounded waits, background processes that are always stopped, free loopback
# ports, replay exporters and a real Prometheus scraping them, waits for pods and CRDs. Used by
# tests/e2e/*.sh, tests/helm/*.sh (through tests/helm/lib.sh), tests/image/image-test.sh,
# tests/crds/*.sh, tests/vpa-live/smoke.sh, tests/vpa-compare/run.sh and bench/scale/run.sh.

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
# jq functions over container resources as the operator writes them. qty: a quantity ("4104m",
# "7552Mi", "2") as a number. at_risk_resize($r): whether these resources ({requests, limits})
# are what a resize for a resource at risk may make of $r within a cooldown: more memory or CPU,
# nothing less.
JQ_RESOURCES='def qty: capture("^(?<n>[0-9.]+)(?<u>[a-zA-Z]*)$")
    | (.n | tonumber) * ({"": 1, "m": 0.001, "Ki": 1024, "Mi": 1048576, "Gi": 1073741824}[.u]);
def at_risk_resize($r): ((.requests.memory | qty) > ($r.requests.memory | qty)
        or (.requests.cpu | qty) > ($r.requests.cpu | qty))
    and (.requests.memory | qty) >= ($r.requests.memory | qty)
    and (.requests.cpu | qty) >= ($r.requests.cpu | qty) and (.limits.cpu | qty) >= ($r.limits.cpu | qty);'
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
jqt() {  # jqt JQ-ARGS...: jq -e, quietly (true when the expression gives a true value)
    jq -e "$@" > /dev/null
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

log() { echo "[$(date -u +%T)] $*" >&2; }  # log MESSAGE: a line on stderr, with the time
on_exit() {  # on_exit FUNCTION: run FUNCTION when the script exits, also on SIGINT and SIGTERM
    trap "$1" EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}
keep_or_remove() {  # keep_or_remove DIR RC: DIR kept (and named) with KEEP=1 or when RC != 0
    if [[ ${KEEP:-0} == 1 || $2 -ne 0 ]]; then
        echo "work directory kept: $1" >&2
    else
        rm -rf "$1"
    fi
}

# ---------------------------------------------------------------- a control plane of one's own

# start_testenv DIR [SETTING=VALUE...]: a control plane (tests/testenv/start.sh) in DIR with
# those PHASESCALE_TESTENV_* settings, stopped by its watchdog once this shell has gone; its env
# sourced, kubectl on the PATH. stop_testenv stops it.
testenv_dir=
start_testenv() {
    local dir=$1 env_file; shift
    mkdir -p "$dir"
    testenv_dir=$dir
    env_file=$(env "$@" PHASESCALE_TESTENV_OWNER_PID=$$ "$(testenv_scripts)/start.sh" "$dir")
    # shellcheck disable=SC1090
    source "$env_file"
    export PATH="$PHASESCALE_TESTENV_BIN:$PATH"
}
stop_testenv() {  # what start_testenv started, if anything
    [[ -z $testenv_dir ]] || "$(testenv_scripts)/stop.sh" "$testenv_dir" > /dev/null 2>&1 || true
}
testenv_scripts() { echo "$(dirname "${BASH_SOURCE[0]}")/testenv"; }

free_port() {  # a TCP port nothing listens on (20000-29999)
    local p
    while :; do
        p=$((20000 + RANDOM % 10000))
        ss -ltnH "sport = :$p" | grep -q . || { echo "$p"; return; }
    done
}

# ---------------------------------------------------------------- pods

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
phase_autoscaler() {  # phase_autoscaler NAMESPACE MODE: the YAML of a PhaseAutoscaler
    # "trainers" of the pods labelled app=train in NAMESPACE, in MODE (quoted: YAML reads a bare
    # Off as false), the rest at its defaults
    cat <<YAML
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: trainers, namespace: $1}
spec:
  selector: {matchLabels: {app: train}}
  mode: "$2"
YAML
}
wait_default_sa() {  # wait_default_sa NAMESPACE...: until each has its default service account
    # (kube-controller-manager makes it; until then the namespace refuses pods)
    local ns
    for ns in "$@"; do wait_for 60 kubectl get sa default -n "$ns" -o name > /dev/null 2>&1; done
}
running_pods() {  # running_pods ARGS...: how many of the pods `kubectl get pods ARGS` lists run
    kubectl get pods "$@" --field-selector status.phase=Running -o name --chunk-size=1000 | wc -l
}
pods_running() {  # pods_running N ARGS...: at least N of the pods `kubectl get pods ARGS` lists run
    local want=$1; shift
    (($(running_pods "$@") >= want))
}

# ---------------------------------------------------------------- replay exporters, Prometheus

# start_exporter EXPORTER LOG PORT ARGS...: the replay exporter EXPORTER with ARGS in the
# background, /metrics on 127.0.0.1:PORT, output to LOG (sets bg_pid); waits until /metrics
# answers.
start_exporter() {
    local exporter=$1 log=$2 port=$3; shift 3
    start_bg "$log" "$exporter" --listen "127.0.0.1:$port" "$@"
    wait_for 30 curl -fsS "http://127.0.0.1:$port/metrics" -o /dev/null 2>/dev/null
}
# start_kubelet_exporter EXPORTER LOG PORT KUBELET_PORT ARGS...: start_exporter, also serving a
# kubelet's /metrics/resource on https://127.0.0.1:KUBELET_PORT with the certificate
# tests/vpa-live/start.sh made (its env sourced).
start_kubelet_exporter() {
    local exporter=$1 log=$2 port=$3 kubelet_port=$4; shift 4
    start_exporter "$exporter" "$log" "$port" --kubelet-listen "127.0.0.1:$kubelet_port" \
        --kubelet-tls-cert "$PHASESCALE_VPA_LIVE_KUBELET_CERT_FILE" \
        --kubelet-tls-key "$PHASESCALE_VPA_LIVE_KUBELET_KEY_FILE" "$@"
}

# start_prometheus DIR PORT TARGET...: a real Prometheus scraping TARGETs (host:port) every
# ${PROM_SCRAPE_INTERVAL:-1s}, data and prometheus.log in DIR; waits until it is ready.
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
# sampled_containers PORT NAMESPACE_REGEX WINDOW SAMPLES: how many containers of those namespaces
# the Prometheus on PORT holds at least SAMPLES memory samples of over the last WINDOW
sampled_containers() {
    local series="container_memory_working_set_bytes{namespace=~\"$2\"}"
    prom_query "$1" "count(count_over_time($series[$3]) >= $4)" |
        jq -r '.data.result[0].value[1] // "0"'
}
