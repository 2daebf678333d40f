#!/usr/bin/env bash
# The operator warns at start when its tick is shorter than the scrape interval, with the
# arguments the chart gives it: rendered with values-kube-prometheus-stack.yaml (tick and
# scrape interval 30 s: no warning) and with a shorter tick (a warning naming both). The
# operator then stops at its kubeconfig (none here): no cluster is needed.
# Usage: tick-warning-test.sh OPERATOR SOURCE_DIR   (helm: $PHASESCALE_HELM, else build.sh's)
set -euo pipefail
operator=$1 root=$2
here=$(cd "$(dirname "$0")" && pwd)
helm=${PHASESCALE_HELM:-$("$here/build.sh")}
# shellcheck source=lib.sh
source "$here/lib.sh"
chart=$root/helm/phasescale
work=$(mktemp -d "${TMPDIR:-/tmp}/phasescale-tick-warning.XXXXXX")
trap 'rm -rf "$work"' EXIT

# start_log NAME [HELM ARGS...]: the operator's log lines before it stops at the missing
# kubeconfig, run with the Deployment's arguments of that rendering.
start_log() {
    local name=$1; shift
    "$helm" template phasescale "$chart" -f "$chart/values-kube-prometheus-stack.yaml" "$@" \
        --show-only templates/deployment.yaml 2> /dev/null > "$work/$name.yaml"
    mapfile -t args < <(yaml2json "$helm" "$work/$name.yaml" | jq -r '.spec.template.spec.containers[0].args[]')
    "$operator" "${args[@]}" --kubeconfig="$work/no-such-kubeconfig" > "$work/$name.log" 2>&1 || true
    cat "$work/$name.log"
}
warnings() { jq -c 'select(.level == "warning" and (.msg | test("--tick is shorter than --scrape-interval")))' 2> /dev/null; }

start_log kps > /dev/null
check "values-kube-prometheus-stack.yaml: the operator started (and stopped at the kubeconfig)" \
    grep -q 'no-such-kubeconfig' "$work/kps.log"
check "values-kube-prometheus-stack.yaml (tick 30s, scrape interval 30s): no warning" \
    test -z "$(warnings < "$work/kps.log")"
start_log short --set tick=10s > /dev/null
check "tick 10s with scrape interval 30s: one warning, naming both" \
    test "$(warnings < "$work/short.log" | jq -c '[.tick_ms, .scrape_interval_ms]')" == "[10000,30000]"
summary helm-tick-warning
