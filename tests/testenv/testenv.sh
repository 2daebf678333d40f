#!/usr/bin/env bash
# The test control plane: etcd, kube-apiserver (TLS, token and client-certificate
# authentication, RBAC), kube-controller-manager, kube-scheduler and KWOK with fake
# nodes, all on free loopback ports, all state under one directory. See README.md.
#
#   testenv.sh start DIR              start everything; writes DIR/env and DIR/kubeconfig
#   testenv.sh stop DIR               stop everything started in DIR; no process is left
#   testenv.sh status DIR             say which components run (exit 1 if one is down)
#   testenv.sh stop-component DIR C   stop one component (etcd, apiserver, controller-manager,
#   testenv.sh kill-component DIR C   scheduler, kwok) with SIGTERM, or SIGKILL (kill-),
#   testenv.sh start-component DIR C  start it again on the same ports, or both
#   testenv.sh restart-component DIR C   (e.g. restart the kube-apiserver under a watch)
#
# Settings (environment, read by start):
#   PHASESCALE_TESTENV_BIN            use these binaries instead of running build.sh
#   PHASESCALE_TESTENV_NODES          number of KWOK nodes (3)
#   PHASESCALE_TESTENV_NODE_CPU       allocatable cpu of each node (8)
#   PHASESCALE_TESTENV_NODE_MEMORY    allocatable memory of each node (32Gi)
#   PHASESCALE_TESTENV_NODE_PODS      allocatable pods of each node (110)
#   PHASESCALE_TESTENV_CONTROLLER_MANAGER  1 to run kube-controller-manager (1)
#   PHASESCALE_TESTENV_SCHEDULER      1 to run kube-scheduler (1)
#   PHASESCALE_TESTENV_APISERVER_ARGS extra kube-apiserver flags (split on spaces)
#   PHASESCALE_TESTENV_OWNER_PID      stop everything when this process has gone (a
#                                     watchdog; with-testenv.sh sets it to itself;
#                                     "parent" means the process that ran start.sh)
#   PHASESCALE_TESTENV_TIMEOUT        seconds to wait for each component (120)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
components=(etcd apiserver controller-manager scheduler kwok)

die() { echo "testenv: $*" >&2; exit 1; }
log() { echo "testenv: $*" >&2; }

# Processes (launch, alive, stop_one), free ports (free_port) and waiting (wait_for).
# shellcheck source=processes.sh
source "$here/processes.sh"
WAIT_TIMEOUT=${PHASESCALE_TESTENV_TIMEOUT:-120}

kubectl_() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" "$@"; }

apiserver_ready() {
    curl -sf --max-time 5 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
        "https://127.0.0.1:$APISERVER_PORT/readyz" | grep -qx ok
}

# ---------------------------------------------------------------- certificates

make_pki() {
    local pki=$DIR/pki
    mkdir -p "$pki"
    (
        cd "$pki"
        umask 077
        make_ca ca phasescale-testenv-ca
        "$here/issue-cert.sh" ca apiserver /CN=kube-apiserver server \
            IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
        "$here/issue-cert.sh" ca admin /O=system:masters/CN=admin client
        # The aggregation layer (metrics.k8s.io of metrics-server, ...): the API server proxies
        # to an extension API server with this client certificate, which the extension server
        # trusts through the separate front-proxy CA (--requestheader-client-ca-file).
        make_ca front-proxy-ca phasescale-testenv-front-proxy-ca
        "$here/issue-cert.sh" front-proxy-ca front-proxy-client /CN=front-proxy-client client
        # Service-account token signing keys (TokenRequest, bound tokens).
        openssl genrsa -out sa.key 2048 2>/dev/null
        openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
        # Static tokens: token,user,uid,"groups". "viewer" has no rights until a test
        # grants some (RBAC is on).
        echo "$ADMIN_TOKEN,admin,admin,\"system:masters\"" >tokens.csv
        echo "$VIEWER_TOKEN,viewer,viewer" >>tokens.csv
    )
}

make_ca() {  # make_ca NAME CN: a self-signed CA, NAME.crt and NAME.key in the current folder
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.crt" -days 3650 \
        -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
}

write_kubeconfig() {
    local ca crt key
    ca=$(base64 -w0 <"$DIR/pki/ca.crt")
    crt=$(base64 -w0 <"$DIR/pki/admin.crt")
    key=$(base64 -w0 <"$DIR/pki/admin.key")
    (
        umask 077
        cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $ADMIN_TOKEN
- name: admin-cert
  user:
    client-certificate-data: $crt
    client-key-data: $key
- name: viewer
  user:
    token: $VIEWER_TOKEN
contexts:
- name: testenv
  context:
    cluster: testenv
    user: admin
    namespace: default
- name: testenv-cert
  context:
    cluster: testenv
    user: admin-cert
    namespace: default
- name: testenv-viewer
  context:
    cluster: testenv
    user: viewer
    namespace: default
current-context: testenv
EOF
    )
}

# ---------------------------------------------------------------- components

start_etcd() {
    mkdir -p "$DIR/etcd"
    launch etcd "$BIN/etcd" \
        --name=testenv \
        --data-dir="$DIR/etcd" \
        --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster="testenv=http://127.0.0.1:$ETCD_PEER_PORT" \
        --unsafe-no-fsync \
        --log-level=warn
    wait_for "etcd" etcd curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
    local extra=()
    # shellcheck disable=SC2206 # word splitting is the point
    [[ -z ${APISERVER_ARGS:-} ]] || extra=($APISERVER_ARGS)
    launch apiserver "$BIN/kube-apiserver" \
        --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
        --bind-address=127.0.0.1 \
        --advertise-address=127.0.0.1 \
        --secure-port="$APISERVER_PORT" \
        --cert-dir="$DIR/pki" \
        --tls-cert-file="$DIR/pki/apiserver.crt" \
        --tls-private-key-file="$DIR/pki/apiserver.key" \
        --client-ca-file="$DIR/pki/ca.crt" \
        --requestheader-client-ca-file="$DIR/pki/front-proxy-ca.crt" \
        --requestheader-allowed-names=front-proxy-client \
        --requestheader-username-headers=X-Remote-User \
        --requestheader-group-headers=X-Remote-Group \
        --requestheader-extra-headers-prefix=X-Remote-Extra- \
        --proxy-client-cert-file="$DIR/pki/front-proxy-client.crt" \
        --proxy-client-key-file="$DIR/pki/front-proxy-client.key" \
        --token-auth-file="$DIR/pki/tokens.csv" \
        --authorization-mode=Node,RBAC \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$DIR/pki/sa.pub" \
        --service-account-signing-key-file="$DIR/pki/sa.key" \
        --service-cluster-ip-range=10.96.0.0/16 \
        --endpoint-reconciler-type=none \
        --shutdown-watch-termination-grace-period=2s \
        --allow-privileged=true \
        --profiling=false \
        "${extra[@]}"
    wait_for "kube-apiserver /readyz" apiserver apiserver_ready
}

start_controller_manager() {
    [[ $CONTROLLER_MANAGER == 1 ]] || return 0
    launch controller-manager "$BIN/kube-controller-manager" \
        --kubeconfig="$DIR/kubeconfig" \
        --authentication-kubeconfig="$DIR/kubeconfig" \
        --authorization-kubeconfig="$DIR/kubeconfig" \
        --secure-port=0 \
        --leader-elect=false \
        --service-account-private-key-file="$DIR/pki/sa.key" \
        --root-ca-file="$DIR/pki/ca.crt" \
        --cluster-signing-cert-file="$DIR/pki/ca.crt" \
        --cluster-signing-key-file="$DIR/pki/ca.key" \
        --use-service-account-credentials=false
}

start_scheduler() {
    [[ $SCHEDULER == 1 ]] || return 0
    launch scheduler "$BIN/kube-scheduler" \
        --kubeconfig="$DIR/kubeconfig" \
        --authentication-kubeconfig="$DIR/kubeconfig" \
        --authorization-kubeconfig="$DIR/kubeconfig" \
        --secure-port=0 \
        --leader-elect=false
}

start_kwok() {
    mkdir -p "$DIR/kwok-home"
    sed -e "s/@NODE_CPU@/$NODE_CPU/g" -e "s/@NODE_MEMORY@/$NODE_MEMORY/g" \
        "$here/stages/node.yaml" - "$here/stages/pod.yaml" >"$DIR/kwok.yaml" <<<"---"
    launch kwok env HOME="$DIR/kwok-home" "$BIN/kwok" \
        --config="$DIR/kwok.yaml" \
        --kubeconfig="$DIR/kubeconfig" \
        --manage-nodes-with-label-selector=type=kwok \
        --cidr=10.244.0.0/16 \
        --node-ip=10.255.0.1 \
        --node-lease-duration-seconds=40 \
        --server-address="127.0.0.1:$KWOK_PORT"
    wait_for "kwok" kwok curl -sf --max-time 2 "http://127.0.0.1:$KWOK_PORT/healthz"
}

start_component() {
    case $1 in
        etcd) start_etcd ;;
        apiserver) start_apiserver ;;
        controller-manager) start_controller_manager ;;
        scheduler) start_scheduler ;;
        kwok) start_kwok ;;
        *) die "unknown component '$1' (one of: ${components[*]})" ;;
    esac
}

create_nodes() {
    local i name manifest=$DIR/nodes.yaml
    : >"$manifest"
    for ((i = 0; i < NODES; i++)); do
        name=kwok-node-$i
        cat >>"$manifest" <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  labels:
    type: kwok
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    node.kubernetes.io/instance-type: kwok
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
status:
  allocatable: {cpu: "$NODE_CPU", memory: "$NODE_MEMORY", pods: "$NODE_PODS"}
  capacity: {cpu: "$NODE_CPU", memory: "$NODE_MEMORY", pods: "$NODE_PODS"}
EOF
    done
    ((NODES == 0)) || kubectl_ apply -f "$manifest" >/dev/null
    wait_for "$NODES KWOK nodes Ready" kwok nodes_ready
    # The API server taints new nodes node.kubernetes.io/not-ready; the controller-manager's
    # node lifecycle controller lifts the taint once a node is Ready. Without it, we do.
    if [[ $CONTROLLER_MANAGER != 1 ]] && ((NODES > 0)); then
        kubectl_ taint nodes -l type=kwok node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
    fi
    wait_for "$NODES KWOK nodes schedulable" kwok nodes_schedulable
}

# nodes_ready: at least NODES nodes labelled type=kwok are Ready
nodes_ready() {
    local n
    n=$(kubectl_ get nodes -l type=kwok \
        -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
        grep -cx True || true)
    ((n >= NODES))
}

# nodes_schedulable: ... and none has a not-ready or unreachable taint any more
nodes_schedulable() {
    nodes_ready || return 1
    ! kubectl_ get nodes -l type=kwok -o jsonpath='{.items[*].spec.taints[*].key}' |
        grep -qE 'node.kubernetes.io/(not-ready|unreachable)'
}

# ---------------------------------------------------------------- env file

write_env() {
    local f=$DIR/env
    {
        echo "# written by tests/testenv/testenv.sh start; source it"
        echo "export PHASESCALE_TESTENV_DIR='$DIR'"
        echo "export PHASESCALE_TESTENV_BIN='$BIN'"
        echo "export KUBECONFIG='$DIR/kubeconfig'"
        echo "export PHASESCALE_TESTENV_APISERVER_URL='https://127.0.0.1:$APISERVER_PORT'"
        echo "export PHASESCALE_TESTENV_APISERVER_PORT=$APISERVER_PORT"
        echo "export PHASESCALE_TESTENV_ETCD_URL='http://127.0.0.1:$ETCD_PORT'"
        echo "export PHASESCALE_TESTENV_ETCD_PORT=$ETCD_PORT"
        echo "export PHASESCALE_TESTENV_ETCD_PEER_PORT=$ETCD_PEER_PORT"
        echo "export PHASESCALE_TESTENV_KWOK_PORT=$KWOK_PORT"
        echo "export PHASESCALE_TESTENV_CA_FILE='$DIR/pki/ca.crt'"
        echo "export PHASESCALE_TESTENV_CLIENT_CERT_FILE='$DIR/pki/admin.crt'"
        echo "export PHASESCALE_TESTENV_CLIENT_KEY_FILE='$DIR/pki/admin.key'"
        echo "export PHASESCALE_TESTENV_FRONT_PROXY_CA_FILE='$DIR/pki/front-proxy-ca.crt'"
        echo "export PHASESCALE_TESTENV_ADMIN_TOKEN='$ADMIN_TOKEN'"
        echo "export PHASESCALE_TESTENV_VIEWER_TOKEN='$VIEWER_TOKEN'"
        echo "export PHASESCALE_TESTENV_NODES=$NODES"
        echo "export PHASESCALE_TESTENV_NODE_CPU='$NODE_CPU'"
        echo "export PHASESCALE_TESTENV_NODE_MEMORY='$NODE_MEMORY'"
        echo "export PHASESCALE_TESTENV_NODE_PODS='$NODE_PODS'"
        echo "export PHASESCALE_TESTENV_CONTROLLER_MANAGER=$CONTROLLER_MANAGER"
        echo "export PHASESCALE_TESTENV_SCHEDULER=$SCHEDULER"
        printf "export PHASESCALE_TESTENV_APISERVER_ARGS=%q\n" "${APISERVER_ARGS:-}"
        pid_exports PHASESCALE_TESTENV "${components[@]}" watchdog
    } >"$f.tmp"
    mv "$f.tmp" "$f"
}

# load_env DIR: the settings a start wrote (for stop, restarts, status)
load_env() {
    [[ -f $DIR/env ]] || die "$DIR/env not found: was the test environment started there?"
    # shellcheck disable=SC1091
    source "$DIR/env"
    BIN=$PHASESCALE_TESTENV_BIN
    APISERVER_PORT=$PHASESCALE_TESTENV_APISERVER_PORT
    ETCD_PORT=$PHASESCALE_TESTENV_ETCD_PORT
    ETCD_PEER_PORT=$PHASESCALE_TESTENV_ETCD_PEER_PORT
    KWOK_PORT=$PHASESCALE_TESTENV_KWOK_PORT
    ADMIN_TOKEN=$PHASESCALE_TESTENV_ADMIN_TOKEN
    VIEWER_TOKEN=$PHASESCALE_TESTENV_VIEWER_TOKEN
    NODES=$PHASESCALE_TESTENV_NODES
    NODE_CPU=$PHASESCALE_TESTENV_NODE_CPU
    NODE_MEMORY=$PHASESCALE_TESTENV_NODE_MEMORY
    NODE_PODS=$PHASESCALE_TESTENV_NODE_PODS
    CONTROLLER_MANAGER=$PHASESCALE_TESTENV_CONTROLLER_MANAGER
    SCHEDULER=$PHASESCALE_TESTENV_SCHEDULER
    APISERVER_ARGS=$PHASESCALE_TESTENV_APISERVER_ARGS
}

# ---------------------------------------------------------------- commands

start_servers() {
    log "starting etcd on 127.0.0.1:$ETCD_PORT"
    start_etcd || return 1
    log "starting kube-apiserver on https://127.0.0.1:$APISERVER_PORT"
    start_apiserver || return 1
    if [[ $CONTROLLER_MANAGER == 1 ]]; then log "starting kube-controller-manager"; fi
    start_controller_manager || return 1
    if [[ $SCHEDULER == 1 ]]; then log "starting kube-scheduler"; fi
    start_scheduler || return 1
    log "starting kwok for $NODES nodes (cpu $NODE_CPU, memory $NODE_MEMORY, pods $NODE_PODS)"
    start_kwok || return 1
}

cmd_start() {
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd)
    local c
    for c in "${components[@]}" watchdog; do
        ! alive "$c" || die "$c is already running in $DIR (stop it first: $0 stop $DIR)"
    done
    rm -rf "$DIR/run" "$DIR/etcd" "$DIR/pki" "$DIR/logs" "$DIR/env" "$DIR/kubeconfig"
    mkdir -p "$DIR/run" "$DIR/logs"
    : >"$DIR/run/starting"

    # From here on, a failure stops whatever was started.
    trap 'rc=$?; if ((rc != 0)); then log "start failed; stopping what was started (logs in $DIR/logs)"; cmd_stop >/dev/null 2>&1 || true; fi; exit $rc' EXIT
    trap 'exit 130' INT TERM

    if [[ -n ${PHASESCALE_TESTENV_BIN:-} ]]; then
        BIN=$PHASESCALE_TESTENV_BIN
    else
        BIN=$("$here/build.sh")
    fi
    for c in etcd kube-apiserver kwok kubectl; do
        [[ -x $BIN/$c ]] || die "$BIN/$c not found"
    done

    NODES=${PHASESCALE_TESTENV_NODES:-3}
    NODE_CPU=${PHASESCALE_TESTENV_NODE_CPU:-8}
    NODE_MEMORY=${PHASESCALE_TESTENV_NODE_MEMORY:-32Gi}
    NODE_PODS=${PHASESCALE_TESTENV_NODE_PODS:-110}
    CONTROLLER_MANAGER=${PHASESCALE_TESTENV_CONTROLLER_MANAGER:-1}
    SCHEDULER=${PHASESCALE_TESTENV_SCHEDULER:-1}
    APISERVER_ARGS=${PHASESCALE_TESTENV_APISERVER_ARGS:-}
    [[ $NODES =~ ^[0-9]+$ ]] || die "PHASESCALE_TESTENV_NODES must be a number"
    [[ $NODE_CPU =~ ^[0-9.]+(m)?$ ]] || die "PHASESCALE_TESTENV_NODE_CPU must look like 8 or 7500m"
    [[ $NODE_MEMORY =~ ^[0-9.]+(k|M|G|T|Ki|Mi|Gi|Ti)?$ ]] || die "PHASESCALE_TESTENV_NODE_MEMORY must look like 32Gi"
    if [[ $CONTROLLER_MANAGER == 1 ]]; then
        [[ -x $BIN/kube-controller-manager ]] || die "$BIN/kube-controller-manager not found"
    fi
    if [[ $SCHEDULER == 1 ]]; then
        [[ -x $BIN/kube-scheduler ]] || die "$BIN/kube-scheduler not found"
    fi

    ADMIN_TOKEN=$(openssl rand -hex 24)
    VIEWER_TOKEN=$(openssl rand -hex 24)
    make_pki

    if [[ -n ${PHASESCALE_TESTENV_OWNER_PID:-} ]]; then
        local owner=$PHASESCALE_TESTENV_OWNER_PID
        # "parent": whoever ran start.sh (start.sh execs this script), e.g. ctest.
        [[ $owner != parent ]] || owner=$PPID
        [[ $owner =~ ^[0-9]+$ ]] && kill -0 "$owner" 2>/dev/null ||
            die "PHASESCALE_TESTENV_OWNER_PID=$PHASESCALE_TESTENV_OWNER_PID is no running process"
        launch watchdog bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
            echo "testenv: owner process $1 has gone; stopping" >&2
            exec "$2" stop-from-watchdog "$3"' watchdog "$owner" "$here/testenv.sh" "$DIR"
    fi

    local attempt
    for attempt in 1 2 3; do
        free_port ETCD_PORT
        free_port ETCD_PEER_PORT
        free_port APISERVER_PORT
        free_port KWOK_PORT
        write_kubeconfig
        write_env
        if start_servers; then
            break
        fi
        if ((attempt < 3)) && grep -qs "address already in use" "$DIR"/logs/{etcd,apiserver,kwok}.log; then
            log "a port was taken by another program meanwhile; trying other ports"
            cmd_stop skip-watchdog
            mkdir -p "$DIR/logs/attempt-$attempt"
            mv "$DIR"/logs/*.log "$DIR/logs/attempt-$attempt/" 2>/dev/null || true
            rm -rf "$DIR/etcd"
            continue
        fi
        exit 1
    done
    write_env
    create_nodes
    # Pods need their service account: the controller-manager makes "default" in every
    # namespace; without it, we make the one in namespace default.
    if [[ $CONTROLLER_MANAGER == 1 ]]; then
        wait_for "service account default/default" controller-manager \
            kubectl_ -n default get serviceaccount default
    else
        kubectl_ -n default create serviceaccount default >/dev/null
    fi
    for c in "${components[@]}"; do
        case $c in
            controller-manager) [[ $CONTROLLER_MANAGER == 1 ]] || continue ;;
            scheduler) [[ $SCHEDULER == 1 ]] || continue ;;
        esac
        alive "$c" || { log "$c exited; last lines of logs/$c.log:"; tail -n 30 "$DIR/logs/$c.log" >&2; exit 1; }
    done
    write_env
    rm -f "$DIR/run/starting"
    trap - EXIT INT TERM
    log "ready: source $DIR/env (KUBECONFIG=$DIR/kubeconfig)"
    echo "$DIR/env"
}

cmd_stop() {
    local skip_watchdog=${1:-}
    [[ -d $DIR/run ]] || return 0
    [[ -n $skip_watchdog ]] || stop_one watchdog
    # Nodes' agents and controllers first, the store last.
    stop_components "${components[@]}"
    rm -f "$DIR/run/starting"
}

cmd_status() {
    local c rc=0 want
    for c in "${components[@]}" watchdog; do
        want=1
        case $c in
            controller-manager) [[ ${PHASESCALE_TESTENV_CONTROLLER_MANAGER:-1} == 1 ]] || want=0 ;;
            scheduler) [[ ${PHASESCALE_TESTENV_SCHEDULER:-1} == 1 ]] || want=0 ;;
            watchdog) want=0 ;;
        esac
        report_status "$c" "$want" || rc=1
    done
    return $rc
}

cmd=${1:-}
[[ $# -ge 2 ]] || usage
DIR=$2
case $cmd in
    start) cmd_start ;;
    stop)
        [[ -d $DIR ]] || exit 0
        DIR=$(cd "$DIR" && pwd)
        cmd_stop
        ;;
    stop-from-watchdog)
        DIR=$(cd "$DIR" && pwd)
        cmd_stop skip-watchdog
        rm -f "$DIR/run/watchdog.pid"
        ;;
    status)
        DIR=$(cd "$DIR" && pwd)
        [[ ! -f $DIR/env ]] || load_env
        cmd_status
        ;;
    stop-component | kill-component | start-component | restart-component)
        [[ $# -ge 3 ]] || usage
        DIR=$(cd "$DIR" && pwd)
        load_env
        name=$3
        [[ " ${components[*]} " == *" $name "* ]] || die "unknown component '$name' (one of: ${components[*]})"
        case $cmd in
            stop-component | restart-component) stop_one "$name" ;;
            kill-component) stop_one "$name" KILL ;;
        esac
        if [[ $cmd == start-component || $cmd == restart-component ]]; then
            ! alive "$name" || die "$name is already running"
            start_component "$name"
        fi
        write_env
        ;;
    *) usage ;;
esac
