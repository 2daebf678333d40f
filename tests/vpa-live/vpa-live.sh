#!/usr/bin/env bash
# The live VPA beside a running test control plane (tests/testenv): metrics-server serving
# metrics.k8s.io through the API server's aggregation layer, the VPA CRDs, and the VPA's
# recommender, updater and admission controller, each in a process group of its own, on free
# loopback ports, with their state under one folder. See README.md and tests/testenv/README.md.
#
#   vpa-live.sh start DIR    start everything (DIR: this script's own state folder); writes
#                            DIR/env; needs a started control plane's env sourced
#                            (tests/testenv/start.sh: KUBECONFIG, PHASESCALE_TESTENV_*)
#   vpa-live.sh stop DIR     stop everything started in DIR; no process is left; safe twice
#   vpa-live.sh status DIR   say which components run (exit 1 if one is down)
#
# Settings (environment, read by start; defaults in brackets):
#   PHASESCALE_VPA_LIVE_BIN                  use these binaries instead of running build.sh
#   PHASESCALE_VPA_LIVE_METRIC_RESOLUTION    metrics-server's --metric-resolution [15s]
#   PHASESCALE_VPA_LIVE_KUBELET_CA_FILE      CA that "kubelet" serving certificates must chain
#                                            to [the test CA]; "insecure": no verification
#   PHASESCALE_VPA_LIVE_NODE_SELECTOR        nodes metrics-server scrapes [all]
#   PHASESCALE_VPA_LIVE_RECOMMENDER_INTERVAL the recommender's --recommender-interval [15s]
#   PHASESCALE_VPA_LIVE_UPDATER_INTERVAL     the updater's --updater-interval [15s]
#   PHASESCALE_VPA_LIVE_UPDATER_LIFETIME     the updater's
#                                            --in-recommendation-bounds-eviction-lifetime-threshold [12h]
#   PHASESCALE_VPA_LIVE_MIN_REPLICAS         the updater's --min-replicas [1]
#   PHASESCALE_VPA_LIVE_FEATURE_GATES        --feature-gates of the updater and admission
#                                            controller [InPlace=true]
#   PHASESCALE_VPA_LIVE_VERBOSITY            klog -v of the VPA components [2]
#   PHASESCALE_VPA_LIVE_OWNER_PID            stop everything when this process has gone
#   PHASESCALE_VPA_LIVE_TIMEOUT              seconds to wait for each component [120]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testenv=$here/../testenv
components=(metrics-server recommender updater admission-controller)

die() { echo "vpa-live: $*" >&2; exit 1; }
log() { echo "vpa-live: $*" >&2; }

# shellcheck source=../testenv/processes.sh
source "$testenv/processes.sh"
WAIT_TIMEOUT=${PHASESCALE_VPA_LIVE_TIMEOUT:-120}

kubectl_() { "$PHASESCALE_TESTENV_BIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }

# The name of the Service the aggregator resolves for metrics.k8s.io, and the certificate's
# name: the aggregator checks the serving certificate against <service>.<namespace>.svc.
ms_service=metrics-server
ms_namespace=kube-system

# ---------------------------------------------------------------- certificates

make_pki() {
    local ca=$PHASESCALE_TESTENV_DIR/pki/ca
    mkdir -p "$DIR/pki"
    [[ -f $ca.key ]] || die "$ca.key not found (the test CA of PHASESCALE_TESTENV_DIR)"
    "$testenv/issue-cert.sh" "$ca" "$DIR/pki/metrics-server" /CN=metrics-server server \
        "DNS:$ms_service.$ms_namespace.svc,DNS:localhost,IP:127.0.0.1"
    "$testenv/issue-cert.sh" "$ca" "$DIR/pki/admission-controller" /CN=vpa-webhook server \
        DNS:localhost,IP:127.0.0.1
    # For the programs that stand in for kubelets (phasescale-replay-exporter --kubelet-tls-*):
    # metrics-server reaches them at a node's InternalIP, 127.0.0.1.
    "$testenv/issue-cert.sh" "$ca" "$DIR/pki/kubelet" /CN=kubelet server \
        DNS:localhost,IP:127.0.0.1
}

# ---------------------------------------------------------------- components

start_metrics_server() {
    local kubelet_tls=(--kubelet-certificate-authority="$KUBELET_CA")
    [[ $KUBELET_CA != insecure ]] || kubelet_tls=(--kubelet-insecure-tls)
    launch metrics-server "$BIN/metrics-server" \
        --kubeconfig="$KUBECONFIG" \
        --authentication-kubeconfig="$KUBECONFIG" \
        --authorization-kubeconfig="$KUBECONFIG" \
        --bind-address=127.0.0.1 \
        --secure-port="$MS_PORT" \
        --tls-cert-file="$DIR/pki/metrics-server.crt" \
        --tls-private-key-file="$DIR/pki/metrics-server.key" \
        --kubelet-use-node-status-port \
        --kubelet-preferred-address-types=InternalIP \
        "${kubelet_tls[@]}" \
        --node-selector="$NODE_SELECTOR" \
        --metric-resolution="$METRIC_RESOLUTION"
    wait_for "metrics-server /healthz" metrics-server \
        curl -sf --max-time 2 --cacert "$PHASESCALE_TESTENV_CA_FILE" \
        "https://127.0.0.1:$MS_PORT/livez"
    register_metrics_api
    wait_for "APIService v1beta1.metrics.k8s.io Available" metrics-server \
        metrics_api_available
}

# The API server proxies /apis/metrics.k8s.io to the Service named in the APIService. An
# ExternalName Service is resolved to its name and the APIService's port (k8s.io/apiserver
# util/proxy ResolveCluster, with --enable-aggregator-routing=false), and needs no Endpoints,
# which could not hold a loopback address anyway.
register_metrics_api() {
    kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata:
  name: $ms_service
  namespace: $ms_namespace
  labels: {app.kubernetes.io/managed-by: phasescale-vpa-live}
spec:
  type: ExternalName
  externalName: localhost
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
  labels: {app.kubernetes.io/managed-by: phasescale-vpa-live}
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {name: $ms_service, namespace: $ms_namespace, port: $MS_PORT}
  caBundle: $(base64 -w0 <"$PHASESCALE_TESTENV_CA_FILE")
  groupPriorityMinimum: 100
  versionPriority: 100
EOF
}

metrics_api_available() {
    [[ $(kubectl_ get apiservice v1beta1.metrics.k8s.io \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}') == True ]]
}

install_crds() {
    kubectl_ apply --server-side -f "$BIN/vpa-v1-crd-gen.yaml" >/dev/null
    # Again and again: kubectl wait fails at once ("accessor error") while a new CRD has no
    # status.conditions yet.
    wait_for "the VPA CRDs to be Established" "" kubectl_ wait --for condition=Established --timeout=5s \
        crd/verticalpodautoscalers.autoscaling.k8s.io \
        crd/verticalpodautoscalercheckpoints.autoscaling.k8s.io
}

# health NAME PORT: the VPA component's /health-check on its metrics address answers OK
health() { curl -sf --max-time 2 "http://127.0.0.1:$2/health-check" | grep -qx OK; }

start_recommender() {
    launch recommender "$BIN/recommender" \
        --kubeconfig="$KUBECONFIG" \
        --address="127.0.0.1:$RECOMMENDER_PORT" \
        --recommender-interval="$RECOMMENDER_INTERVAL" \
        --v="$VERBOSITY"
    wait_for "recommender /health-check" recommender health recommender "$RECOMMENDER_PORT"
}

start_updater() {
    launch updater "$BIN/updater" \
        --kubeconfig="$KUBECONFIG" \
        --address="127.0.0.1:$UPDATER_PORT" \
        --updater-interval="$UPDATER_INTERVAL" \
        --min-replicas="$MIN_REPLICAS" \
        --in-recommendation-bounds-eviction-lifetime-threshold="$UPDATER_LIFETIME" \
        --feature-gates="$FEATURE_GATES" \
        --v="$VERBOSITY"
    wait_for "updater /health-check" updater health updater "$UPDATER_PORT"
}

# The webhook is registered by URL (https://127.0.0.1:PORT); the admission controller puts
# --client-ca-file into the MutatingWebhookConfiguration's caBundle, so it is the CA of its
# serving certificate. It listens on all interfaces (its source has no bind-address flag) and
# registers the webhook 10 s after it starts (a constant in its source).
start_admission_controller() {
    launch admission-controller "$BIN/admission-controller" \
        --kubeconfig="$KUBECONFIG" \
        --address="127.0.0.1:$ADMISSION_METRICS_PORT" \
        --port="$ADMISSION_PORT" \
        --client-ca-file="$PHASESCALE_TESTENV_CA_FILE" \
        --tls-cert-file="$DIR/pki/admission-controller.crt" \
        --tls-private-key="$DIR/pki/admission-controller.key" \
        --register-by-url \
        --webhook-address=https://127.0.0.1 \
        --webhook-port="$ADMISSION_PORT" \
        --webhook-timeout-seconds=10 \
        --feature-gates="$FEATURE_GATES" \
        --v="$VERBOSITY"
    wait_for "admission-controller /health-check" admission-controller \
        health admission-controller "$ADMISSION_METRICS_PORT"
    wait_for "MutatingWebhookConfiguration vpa-webhook-config" admission-controller \
        webhook_registered
    # The updater evicts only while this Lease is fresh (--use-admission-controller-status).
    wait_for "Lease kube-system/vpa-admission-controller" admission-controller \
        kubectl_ -n kube-system get lease vpa-admission-controller
}

webhook_registered() {
    kubectl_ get mutatingwebhookconfiguration vpa-webhook-config \
        -o jsonpath='{.webhooks[0].clientConfig.url}' | grep -qx "https://127.0.0.1:$ADMISSION_PORT"
}

# ---------------------------------------------------------------- env file

write_env() {
    local f=$DIR/env
    {
        echo "# written by tests/vpa-live/vpa-live.sh start; source it"
        echo "export PHASESCALE_VPA_LIVE_DIR='$DIR'"
        echo "export PHASESCALE_VPA_LIVE_BIN='$BIN'"
        echo "export PHASESCALE_VPA_LIVE_TESTENV_DIR='$PHASESCALE_TESTENV_DIR'"
        echo "export PHASESCALE_VPA_LIVE_KUBECONFIG='$KUBECONFIG'"
        echo "export PHASESCALE_VPA_LIVE_KUBECTL_BIN='$PHASESCALE_TESTENV_BIN'"
        echo "export PHASESCALE_VPA_LIVE_METRICS_SERVER_PORT=$MS_PORT"
        echo "export PHASESCALE_VPA_LIVE_RECOMMENDER_METRICS_PORT=$RECOMMENDER_PORT"
        echo "export PHASESCALE_VPA_LIVE_UPDATER_METRICS_PORT=$UPDATER_PORT"
        echo "export PHASESCALE_VPA_LIVE_ADMISSION_PORT=$ADMISSION_PORT"
        echo "export PHASESCALE_VPA_LIVE_ADMISSION_METRICS_PORT=$ADMISSION_METRICS_PORT"
        echo "export PHASESCALE_VPA_LIVE_KUBELET_CERT_FILE='$DIR/pki/kubelet.crt'"
        echo "export PHASESCALE_VPA_LIVE_KUBELET_KEY_FILE='$DIR/pki/kubelet.key'"
        echo "export PHASESCALE_VPA_LIVE_KUBELET_CA_FILE='$KUBELET_CA'"
        echo "export PHASESCALE_VPA_LIVE_METRIC_RESOLUTION='$METRIC_RESOLUTION'"
        echo "export PHASESCALE_VPA_LIVE_NODE_SELECTOR='$NODE_SELECTOR'"
        echo "export PHASESCALE_VPA_LIVE_RECOMMENDER_INTERVAL='$RECOMMENDER_INTERVAL'"
        echo "export PHASESCALE_VPA_LIVE_UPDATER_INTERVAL='$UPDATER_INTERVAL'"
        echo "export PHASESCALE_VPA_LIVE_UPDATER_LIFETIME='$UPDATER_LIFETIME'"
        echo "export PHASESCALE_VPA_LIVE_MIN_REPLICAS='$MIN_REPLICAS'"
        echo "export PHASESCALE_VPA_LIVE_FEATURE_GATES='$FEATURE_GATES'"
        pid_exports PHASESCALE_VPA_LIVE "${components[@]}" watchdog
    } >"$f.tmp"
    mv "$f.tmp" "$f"
}

# ---------------------------------------------------------------- commands

read_settings() {
    METRIC_RESOLUTION=${PHASESCALE_VPA_LIVE_METRIC_RESOLUTION:-15s}
    KUBELET_CA=${PHASESCALE_VPA_LIVE_KUBELET_CA_FILE:-$PHASESCALE_TESTENV_CA_FILE}
    NODE_SELECTOR=${PHASESCALE_VPA_LIVE_NODE_SELECTOR:-}
    RECOMMENDER_INTERVAL=${PHASESCALE_VPA_LIVE_RECOMMENDER_INTERVAL:-15s}
    UPDATER_INTERVAL=${PHASESCALE_VPA_LIVE_UPDATER_INTERVAL:-15s}
    UPDATER_LIFETIME=${PHASESCALE_VPA_LIVE_UPDATER_LIFETIME:-12h}
    MIN_REPLICAS=${PHASESCALE_VPA_LIVE_MIN_REPLICAS:-1}
    FEATURE_GATES=${PHASESCALE_VPA_LIVE_FEATURE_GATES-InPlace=true}
    VERBOSITY=${PHASESCALE_VPA_LIVE_VERBOSITY:-2}
    [[ $KUBELET_CA == insecure || -f $KUBELET_CA ]] ||
        die "PHASESCALE_VPA_LIVE_KUBELET_CA_FILE=$KUBELET_CA: no such file (or say insecure)"
    [[ $MIN_REPLICAS =~ ^[0-9]+$ ]] || die "PHASESCALE_VPA_LIVE_MIN_REPLICAS must be a number"
    local d
    for d in METRIC_RESOLUTION RECOMMENDER_INTERVAL UPDATER_INTERVAL UPDATER_LIFETIME; do
        [[ ${!d} =~ ^([0-9]+(ms|s|m|h))+$ ]] ||
            die "PHASESCALE_VPA_LIVE_$d must be a Go duration like 15s or 1m30s, not '${!d}'"
    done
}

start_owner_watchdog() {
    local owner=${PHASESCALE_VPA_LIVE_OWNER_PID:-}
    [[ -n $owner ]] || return 0
    [[ $owner =~ ^[0-9]+$ ]] && kill -0 "$owner" 2>/dev/null ||
        die "PHASESCALE_VPA_LIVE_OWNER_PID=$owner is no running process"
    launch watchdog bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
        echo "vpa-live: owner process $1 has gone; stopping" >&2
        exec "$2" stop-from-watchdog "$3"' watchdog "$owner" "$here/vpa-live.sh" "$DIR"
}

cmd_start() {
    [[ -n ${PHASESCALE_TESTENV_DIR:-} && -n ${KUBECONFIG:-} && -n ${PHASESCALE_TESTENV_BIN:-} ]] ||
        die "source a started test control plane's env first (tests/testenv/start.sh prints its path)"
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd)
    local c
    for c in "${components[@]}" watchdog; do
        ! alive "$c" || die "$c is already running in $DIR (stop it first: $here/stop.sh $DIR)"
    done
    rm -rf "$DIR/run" "$DIR/pki" "$DIR/logs" "$DIR/env"
    mkdir -p "$DIR/run" "$DIR/logs"

    # From here on, a failure stops whatever was started.
    trap 'rc=$?; if ((rc != 0)); then log "start failed; stopping what was started (logs in $DIR/logs)"; cmd_stop >/dev/null 2>&1 || true; fi; exit $rc' EXIT
    trap 'exit 130' INT TERM

    BIN=${PHASESCALE_VPA_LIVE_BIN:-$("$here/build.sh")}
    for c in "${components[@]}" vpa-v1-crd-gen.yaml; do
        [[ -e $BIN/$c ]] || die "$BIN/$c not found"
    done
    read_settings
    make_pki
    start_owner_watchdog
    free_port MS_PORT
    free_port RECOMMENDER_PORT
    free_port UPDATER_PORT
    free_port ADMISSION_PORT
    free_port ADMISSION_METRICS_PORT
    write_env

    log "starting metrics-server on https://127.0.0.1:$MS_PORT (APIService v1beta1.metrics.k8s.io)"
    start_metrics_server
    log "installing the VPA CRDs"
    install_crds
    log "starting the VPA admission controller on https://127.0.0.1:$ADMISSION_PORT"
    start_admission_controller &
    local admission=$!
    log "starting the VPA recommender and updater"
    start_recommender
    start_updater
    wait "$admission" || exit 1
    for c in "${components[@]}"; do
        alive "$c" || { log "$c exited; last lines of logs/$c.log:"; tail -n 30 "$DIR/logs/$c.log" >&2; exit 1; }
    done
    write_env
    trap - EXIT INT TERM
    log "ready: source $DIR/env"
    echo "$DIR/env"
}

# Objects start registered in the API server: the webhook (failurePolicy Ignore, but every
# pod creation would wait for its timeout) and the APIService (discovery would report
# metrics.k8s.io unavailable). They are removed if the API server still answers.
unregister() {
    [[ -f ${KUBECONFIG:-} && -x ${PHASESCALE_TESTENV_BIN:-}/kubectl ]] || return 0
    kubectl_ --request-timeout=5s delete mutatingwebhookconfiguration/vpa-webhook-config \
        apiservice/v1beta1.metrics.k8s.io --ignore-not-found >/dev/null 2>&1 || true
}

cmd_stop() {
    local skip_watchdog=${1:-}
    [[ -d $DIR/run ]] || return 0
    [[ -n $skip_watchdog ]] || stop_one watchdog
    stop_components "${components[@]}"
}

cmd_status() {
    local c rc=0
    for c in "${components[@]}"; do
        report_status "$c" || rc=1
    done
    return $rc
}

[[ $# -eq 2 ]] || usage
DIR=$2
case $1 in
    start) cmd_start ;;
    stop | stop-from-watchdog)
        [[ -d $DIR ]] || exit 0
        DIR=$(cd "$DIR" && pwd)
        if [[ -f $DIR/env ]]; then
            # shellcheck disable=SC1091
            source "$DIR/env"
            KUBECONFIG=$PHASESCALE_VPA_LIVE_KUBECONFIG
            PHASESCALE_TESTENV_BIN=$PHASESCALE_VPA_LIVE_KUBECTL_BIN
        fi
        if [[ $1 == stop ]]; then cmd_stop; else cmd_stop skip-watchdog; rm -f "$DIR/run/watchdog.pid"; fi
        unregister
        ;;
    status)
        DIR=$(cd "$DIR" && pwd)
        cmd_status
        ;;
    *) usage ;;
esac
