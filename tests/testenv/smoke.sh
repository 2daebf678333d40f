#!/usr/bin/env bash
# smoke.sh: starts the test control plane, checks with kubectl that authentication,
# RBAC, KWOK nodes and pods, and in-place resize (accepted, in progress, Infeasible,
# QoS change rejected) behave as README.md says, restarts the kube-apiserver, stops
# everything and checks that no process is left. Exits non-zero on any failure.
#
# Environment: PHASESCALE_TESTENV_DIR (state directory, kept; default a temporary one,
# removed on success), and everything testenv.sh reads.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
# check DESCRIPTION CMD...: CMD must succeed
check() { local d=$1; shift; if "$@" >/dev/null; then pass "$d"; else fail "$d"; fi; }
# fatal DESCRIPTION: stop here (the rest depends on it)
fatal() { fail "$*"; finish; }

if [[ -n ${PHASESCALE_TESTENV_DIR:-} ]]; then
    dir=$PHASESCALE_TESTENV_DIR
    keep=1
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/phasescale-smoke.XXXXXX")
    keep=0
fi

finished=0
finish() {
    ((finished)) && return
    finished=1
    trap - EXIT
    local pids=""
    if [[ -f $dir/env ]]; then
        pids=$(grep -o 'PHASESCALE_TESTENV_PID_[A-Z_]*=[0-9]*' "$dir/env" | cut -d= -f2 | tr '\n' ' ')
    fi
    if "$here/stop.sh" "$dir"; then pass "stop.sh"; else fail "stop.sh"; fi
    local left="" p
    for p in $pids; do
        [[ -d /proc/$p && "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]] && left+=" $p"
    done
    # Also anything whose command line names the state directory.
    left+=$(pgrep -f -- "$dir/" | grep -vx "$$" | sed 's/^/ /' | tr -d '\n' || true)
    if [[ -z ${left// /} ]]; then
        pass "no process left after stop"
    else
        fail "processes left after stop:$left"
        ps -o pid,pgid,args -p "${left# }" 2>/dev/null || true
    fi
    if ((failed == 0 && keep == 0)); then
        rm -rf "$dir"
    else
        echo "state and logs in $dir"
    fi
    echo "smoke: $passed passed, $failed failed"
    ((failed == 0))
    exit $?
}
trap finish EXIT
trap 'fail "interrupted"; finish' INT TERM

# ------------------------------------------------------------------------------ start
t0=$SECONDS
env_file=$("$here/start.sh" "$dir") || fatal "start.sh"
pass "start.sh ($((SECONDS - t0)) s)"
# shellcheck disable=SC1090
source "$env_file"
k() { "$PHASESCALE_TESTENV_BIN/kubectl" "$@"; }
pod_json() { k get pod "$1" -o json; }

# wait_until SECONDS DESCRIPTION CMD...: poll CMD until it succeeds
wait_until() {
    local limit=$1 d=$2 deadline; shift 2
    deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS > deadline)); then fail "$d (waited $limit s)"; return 1; fi
        sleep 0.2
    done
    pass "$d"
}

# ------------------------------------------------------------------------------ apiserver
check "/readyz with the token, verifying the serving certificate" \
    bash -c "curl -sf --cacert '$PHASESCALE_TESTENV_CA_FILE' \
        -H 'Authorization: Bearer $PHASESCALE_TESTENV_ADMIN_TOKEN' \
        '$PHASESCALE_TESTENV_APISERVER_URL/readyz' | grep -qx ok"
check "the serving certificate does not verify against the system CAs" \
    bash -c "! curl -sf '$PHASESCALE_TESTENV_APISERVER_URL/readyz' 2>/dev/null"
check "the serving certificate is valid for localhost too" \
    bash -c "curl -sf --cacert '$PHASESCALE_TESTENV_CA_FILE' \
        -H 'Authorization: Bearer $PHASESCALE_TESTENV_ADMIN_TOKEN' \
        'https://localhost:$PHASESCALE_TESTENV_APISERVER_PORT/readyz' | grep -qx ok"
check "token user is admin in system:masters" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' auth whoami -o json |
        jq -e '.status.userInfo.username == \"admin\" and (.status.userInfo.groups | index(\"system:masters\"))'"
check "client-certificate user is admin in system:masters" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' --context testenv-cert auth whoami -o json |
        jq -e '.status.userInfo.username == \"admin\" and (.status.userInfo.groups | index(\"system:masters\"))'"
check "client certificate works with curl" \
    bash -c "curl -sf --cacert '$PHASESCALE_TESTENV_CA_FILE' --cert '$PHASESCALE_TESTENV_CLIENT_CERT_FILE' \
        --key '$PHASESCALE_TESTENV_CLIENT_KEY_FILE' '$PHASESCALE_TESTENV_APISERVER_URL/api/v1/namespaces/default' >/dev/null"
check "RBAC is on: viewer may not list pods" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' --context testenv-viewer get pods 2>&1 | grep -q Forbidden"
check "server version is $(cat "$PHASESCALE_TESTENV_BIN/.kube-version" 2>/dev/null || echo '?')" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' version -o json |
        jq -e --arg v \"\$(cat '$PHASESCALE_TESTENV_BIN/.kube-version')\" '.serverVersion.gitVersion == \$v'"
check "TokenRequest works (kubectl create token)" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' create token default --duration=10m | grep -q '^ey'"

# ------------------------------------------------------------------------------ nodes
check "$PHASESCALE_TESTENV_NODES KWOK nodes Ready with cpu $PHASESCALE_TESTENV_NODE_CPU" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get nodes -l type=kwok -o json | jq -e --argjson n $PHASESCALE_TESTENV_NODES \
        '[.items[] | select(.status.allocatable.cpu == \"$PHASESCALE_TESTENV_NODE_CPU\" and
           (.status.conditions[] | select(.type == \"Ready\") | .status) == \"True\")] | length == \$n'"

# ------------------------------------------------------------------------------ pods
# guaranteed: bound by the scheduler if there is one, else given a node.
node_field=""
[[ $PHASESCALE_TESTENV_SCHEDULER == 1 ]] || node_field="nodeName: kwok-node-0"
k apply -f - >/dev/null <<EOF || fatal "create pods"
apiVersion: v1
kind: Pod
metadata:
  name: guaranteed
spec:
  $node_field
  containers:
  - name: main
    image: registry.invalid/trainer:1
    resources:
      requests: {cpu: 500m, memory: 256Mi}
      limits: {cpu: 500m, memory: 256Mi}
---
apiVersion: v1
kind: Pod
metadata:
  name: burstable
  annotations:
    testenv.phasescale.io/resize-delay-ms: "3000"
spec:
  nodeName: kwok-node-1
  containers:
  - name: main
    image: registry.invalid/trainer:1
    resources:
      requests: {cpu: 250m, memory: 128Mi}
      limits: {cpu: "1", memory: 512Mi}
  - name: sidecar
    image: registry.invalid/sidecar:1
    resources:
      requests: {cpu: 100m, memory: 64Mi}
EOF
pass "pods created"

for p in guaranteed burstable; do
    wait_until 60 "$p is Running and Ready" \
        k wait --for=condition=Ready "pod/$p" --timeout=1s
done
check "guaranteed was scheduled onto a KWOK node" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o jsonpath='{.spec.nodeName}' | grep -q '^kwok-node-'"
check "QoS classes are Guaranteed and Burstable" \
    bash -c "[[ \$('$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o jsonpath='{.status.qosClass}') == Guaranteed &&
              \$('$PHASESCALE_TESTENV_BIN/kubectl' get pod burstable -o jsonpath='{.status.qosClass}') == Burstable ]]"

# status_matches_spec POD: every container's status resources equal its spec resources,
# allocatedResources equal the spec requests, and no resize condition is left.
status_matches_spec() {
    pod_json "$1" | jq -e '
        . as $p
        | ([.spec.containers[] as $c | .status.containerStatuses[] | select(.name == $c.name)
            | (.resources == $c.resources) and (.allocatedResources == $c.resources.requests)]
           | length == ($p.spec.containers | length) and all)
        and ([.status.conditions[] | select(.type | startswith("PodResize"))] | length == 0)' >/dev/null
}
check "guaranteed: status resources equal the spec's" status_matches_spec guaranteed
check "burstable: status resources (both containers) equal the spec's" status_matches_spec burstable
check "guaranteed: status resources are cpu 500m / memory 256Mi" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o json | jq -e '.status.containerStatuses[0].resources ==
        {requests: {cpu: \"500m\", memory: \"256Mi\"}, limits: {cpu: \"500m\", memory: \"256Mi\"}}'"

# ------------------------------------------------------------------------------ resize
resize() { # POD PATCH (strategic merge, through the resize subresource)
    k patch pod "$1" --subresource resize --patch "$2"
}
gen0=$(k get pod guaranteed -o jsonpath='{.metadata.generation}')
if resize guaranteed '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"1","memory":"512Mi"},"limits":{"cpu":"1","memory":"512Mi"}}}]}}' >/dev/null; then
    pass "guaranteed: resize to cpu 1 / memory 512Mi accepted"
else
    fail "guaranteed: resize to cpu 1 / memory 512Mi accepted"
fi
check "guaranteed: spec shows the new resources" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o json | jq -e '.spec.containers[0].resources ==
        {requests: {cpu: \"1\", memory: \"512Mi\"}, limits: {cpu: \"1\", memory: \"512Mi\"}}'"
check "guaranteed: the resize raised metadata.generation" \
    bash -c "(( \$('$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o jsonpath='{.metadata.generation}') > $gen0 ))"
wait_until 30 "guaranteed: KWOK applied the resize to the status" status_matches_spec guaranteed
check "guaranteed: status.observedGeneration follows metadata.generation" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o json | jq -e '.status.observedGeneration == .metadata.generation'"
check "guaranteed: still Guaranteed and Ready after the resize" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o json | jq -e '.status.qosClass == \"Guaranteed\" and
        (.status.conditions[] | select(.type == \"Ready\") | .status) == \"True\"'"

# A resize KWOK delays (annotation testenv.phasescale.io/resize-delay-ms=3000): first
# PodResizeInProgress with allocatedResources updated, then the status resources.
if resize burstable '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"750m","memory":"256Mi"},"limits":{"cpu":"2","memory":"1Gi"}}}]}}' >/dev/null; then
    pass "burstable: resize of one of two containers accepted"
else
    fail "burstable: resize of one of two containers accepted"
fi
in_progress() {
    pod_json burstable | jq -e '
        . as $p
        | ([.status.conditions[] | select(.type == "PodResizeInProgress" and .status == "True"
            and .observedGeneration == $p.metadata.generation)] | length == 1)
        and (.status.containerStatuses[] | select(.name == "main")
            | .allocatedResources == {cpu: "750m", memory: "256Mi"} and .resources.requests.cpu == "250m")' >/dev/null
}
wait_until 10 "burstable: PodResizeInProgress while the resize is delayed" in_progress
wait_until 30 "burstable: resize completed, PodResizeInProgress cleared" status_matches_spec burstable
check "burstable: sidecar untouched" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod burstable -o json | jq -e '.status.containerStatuses[] | select(.name == \"sidecar\")
        | .resources == {requests: {cpu: \"100m\", memory: \"64Mi\"}}'"

# Beyond the node: requests of 16 cpus on an 8-cpu node are Infeasible, and the status
# keeps the resources the pod runs with.
if resize guaranteed '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"16"},"limits":{"cpu":"16"}}}]}}' >/dev/null; then
    pass "guaranteed: resize to cpu 16 accepted by the API server"
else
    fail "guaranteed: resize to cpu 16 accepted by the API server"
fi
infeasible() {
    pod_json guaranteed | jq -e '
        . as $p
        | ([.status.conditions[] | select(.type == "PodResizePending" and .status == "True"
            and .reason == "Infeasible" and .observedGeneration == $p.metadata.generation
            and (.message | test("cpu, requested: 16000, capacity: 8000")))] | length == 1)
        and .status.containerStatuses[0].resources.requests.cpu == "1"
        and .status.containerStatuses[0].allocatedResources.cpu == "1"' >/dev/null
}
wait_until 30 "guaranteed: PodResizePending/Infeasible reported, status unchanged" infeasible
sleep 1
check "guaranteed: Infeasible is stable (KWOK does not loop)" infeasible
check "guaranteed: a ResizeInfeasible event was recorded" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get events --field-selector involvedObject.name=guaranteed,reason=ResizeInfeasible -o name | grep -q ."
resize guaranteed '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"1"}}}]}}' >/dev/null ||
    fail "guaranteed: resize back to cpu 1"
wait_until 30 "guaranteed: resizing back clears PodResizePending" status_matches_spec guaranteed

# Memory beyond the node.
resize guaranteed '{"spec":{"containers":[{"name":"main","resources":{"requests":{"memory":"64Gi"},"limits":{"memory":"64Gi"}}}]}}' >/dev/null ||
    fail "guaranteed: resize to memory 64Gi accepted"
wait_until 30 "guaranteed: memory beyond the node is Infeasible too" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o json | jq -e '.status.conditions[]
        | select(.type == \"PodResizePending\" and .reason == \"Infeasible\")
        | .message | test(\"memory, requested: 68719476736, capacity: 34359738368\")'"
resize guaranteed '{"spec":{"containers":[{"name":"main","resources":{"requests":{"memory":"512Mi"},"limits":{"memory":"512Mi"}}}]}}' >/dev/null ||
    fail "guaranteed: resize back to memory 512Mi"
wait_until 30 "guaranteed: back to a feasible size" status_matches_spec guaranteed

# A resize that would change the QoS class (Guaranteed -> Burstable) is rejected.
out=$(resize guaranteed '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"1"}}}]}}' 2>&1)
rc=$?
if ((rc != 0)) && grep -qi "qos" <<<"$out"; then
    pass "QoS-changing resize rejected: $(tr '\n' ' ' <<<"$out" | cut -c1-160)"
else
    fail "QoS-changing resize rejected (exit $rc): $out"
fi
check "guaranteed: spec unchanged by the rejected resize" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed -o json | jq -e '.spec.containers[0].resources ==
        {requests: {cpu: \"1\", memory: \"512Mi\"}, limits: {cpu: \"1\", memory: \"512Mi\"}}'"
out=$(k patch pod guaranteed --patch '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"2"}}}]}}' 2>&1)
rc=$?
if ((rc != 0)); then
    pass "resources cannot be changed through a plain pod patch (only through resize)"
else
    fail "a plain pod patch changed resources: $out"
fi

# ------------------------------------------------------------------------------ restart
if "$here/testenv.sh" restart-component "$dir" apiserver; then
    pass "kube-apiserver restarted on the same port"
else
    fail "kube-apiserver restarted on the same port"
fi
source "$env_file"
check "pods are still there after the restart" \
    bash -c "'$PHASESCALE_TESTENV_BIN/kubectl' get pod guaranteed burstable -o name | grep -c . | grep -qx 2"
check "status reports every component running" "$here/testenv.sh" status "$dir"

# ------------------------------------------------------------------------------ delete
if k delete pod guaranteed burstable --wait=true --timeout=60s >/dev/null; then
    pass "pods deleted (KWOK removes them)"
else
    fail "pods deleted (KWOK removes them)"
fi

finish
