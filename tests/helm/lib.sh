# Shell helpers shared by the chart's tests (sourced, not run). The scenario pieces
# (ports, checks, waiting, background processes, Prometheus and the replay exporter) are the
# ones tests/operator/e2e.sh uses, here as functions.

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
summary() {  # summary NAME: the closing line, and the exit status
    echo "$1: $passed passed, $failures failed"
    [[ $failures == 0 ]]
}

# ---------------------------------------------------------------- YAML

# yaml2json HELM FILE...: each YAML document of the files as one line of JSON (empty and
# comment-only documents dropped). Helm's own YAML parser does it (fromYaml in a throwaway
# chart), so no YAML tool beyond helm is needed.
yaml2json() {
    local helm=$1; shift
    local chart f i=0
    chart=$(mktemp -d "${TMPDIR:-/tmp}/yaml2json.XXXXXX")
    mkdir -p "$chart/templates" "$chart/in"
    printf 'apiVersion: v2\nname: yaml2json\nversion: 0.0.0\n' > "$chart/Chart.yaml"
    cat > "$chart/templates/out.yaml" <<'TPL'
{{- range $path, $_ := .Files.Glob "in/*" }}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" ($.Files.Get $path) -1 }}
{{- $o := fromYaml $doc }}
{{- if hasKey $o "Error" }}{{ fail (printf "%s: %s" $path $o.Error) }}{{ end }}
{{- if $o }}
---
{{ toJson $o }}
{{- end }}
{{- end }}
{{- end }}
TPL
    for f in "$@"; do
        cp "$f" "$chart/in/$(printf '%03d' $i)-$(basename "$f")"
        i=$((i + 1))
    done
    "$helm" template yaml2json "$chart" | grep '^{'
    local rc=${PIPESTATUS[0]}
    rm -rf "$chart"
    return "$rc"
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
# second, data in DIR; waits until it is ready.
start_prometheus() {
    local dir=$1 port=$2; shift 2
    local targets="" t
    for t in "$@"; do targets+="${targets:+, }'$t'"; done
    mkdir -p "$dir"
    cat > "$dir/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
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
