#!/usr/bin/env bash
# The chart's RBAC, proven on the real control plane of tests/testenv (kube-apiserver with
# RBAC and an audit log, KWOK nodes):
#   1. `helm install` of helm/phasescale (its crds/ folder installs the CRD; the Deployment
#      rolls out on KWOK nodes; NOTES shows a PhaseAutoscaler that the API server accepts);
#      deploy/ is accepted by the API server too (server-side dry run);
#   2. phasescale-operator runs outside the cluster with a token of the chart's ServiceAccount
#      (TokenRequest, `kubectl create token`) and the Deployment's own arguments, through a
#      scenario that makes every call it makes in the e2e: informers on pods and
#      PhaseAutoscalers, labels and annotations, in-place resizes, Events created and (a
#      repeated ResizeFailed) patched, the PhaseAutoscaler status, the leader Lease (create,
#      get, renew, release), the model from the chart's ConfigMap, the VPA CRD check and VPA
#      list, the node informer. Metrics come from a real Prometheus scraping tools/replay-exporter, as in
#      tests/e2e/e2e.sh. The API server's audit log (the operator's user only) shows
#      every request: none is refused (no 401/403), and the requests made are exactly the
#      (verb, resource) pairs that the chart's rules grant: no rule goes unused;
#   3. each verb of each rule is removed in turn (the ClusterRole or Role replaced without
#      it), the operator run again, and the audit log shows that very request refused (403):
#      no verb is superfluous;
#   4. the Grafana dashboard's queries run on that Prometheus, which also scraped the
#      operator: every query is valid, and each panel of the operator's metrics shows data
#      (where this operator exposes them); its ConfigMap for Grafana's sidecar is installed.
# A ValidatingAdmissionPolicy refuses resizes of one pod (422, never 403), so that the
# operator's ResizeFailed Event repeats and is patched.
# Usage: install-test.sh OPERATOR REPLAY_EXPORTER PHASESCALE_CLI SOURCE_DIR
# (it starts and stops a control plane of its own with tests/testenv/with-testenv.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

release_ns=phasescale-system
sa=phasescale-operator
sa_user=system:serviceaccount:$release_ns:$sa

# ------------------------------------------------------------------ outside: the control plane
if [[ ${1:-} != --inside ]]; then
    [[ $# -eq 4 ]] || { echo "usage: $0 OPERATOR REPLAY_EXPORTER PHASESCALE_CLI SOURCE_DIR" >&2; exit 2; }
    # Helm first, so that a cold build (minutes) is not counted against the control plane.
    "$here/build.sh" > /dev/null
    work=$(mktemp -d "${TMPDIR:-/tmp}/phasescale-helm-install.XXXXXX")
    # The API server audits the operator's requests (and nobody else's) into $work/audit.log.
    cat > "$work/audit-policy.yaml" <<YAML
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: ["$sa_user"]
  - level: None
YAML
    export PHASESCALE_TESTENV_APISERVER_ARGS="--audit-log-path=$work/audit.log --audit-policy-file=$work/audit-policy.yaml --audit-log-maxbackup=0"
    export PHASESCALE_TESTENV_NODES=3
    rc=0
    "$here/../testenv/with-testenv.sh" "$0" --inside "$work" "$@" || rc=$?
    if [[ $rc == 0 && ${PHASESCALE_HELM_KEEP:-0} != 1 ]]; then rm -rf "$work"; else echo "state kept in $work"; fi
    exit "$rc"
fi

# ------------------------------------------------------------------ inside: the test
shift
work=$1 operator=$2 replay=$3 cli=$4 root=$5
# shellcheck source=lib.sh
source "$here/lib.sh"
export PATH="$PHASESCALE_TESTENV_BIN:$PATH"
helm=$("$here/build.sh")
audit=$work/audit.log
ns=helm-it
started=$SECONDS

cleanup() {
    local rc=$?
    stop_all_bg
    if [[ $rc -ne 0 || $failures -ne 0 ]]; then
        echo "--- operator log (tail) ---"; tail -n 30 "$work/operator.log" 2>/dev/null || true
    fi
}
trap cleanup EXIT

# ------------------------------------------------------------------ Prometheus, exporter
exporter_port=$(free_port)
metrics_port=$(free_port)
prom_port=$(free_port)
start_prometheus "$work/prom" "$prom_port" "127.0.0.1:$exporter_port" "127.0.0.1:$metrics_port" ||
    { echo "FAIL: Prometheus not ready"; exit 1; }

# ------------------------------------------------------------------ the cluster side
kubectl create namespace "$ns" > /dev/null
# A VerticalPodAutoscaler CRD (its name and kind are what the operator looks for; the schema
# is left open), so that the operator checks for it and lists VPAs.
kubectl apply -f - > /dev/null <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: verticalpodautoscalers.autoscaling.k8s.io
  annotations: {api-approved.kubernetes.io: "https://github.com/kubernetes/kubernetes/pull/63797"}  # as the VPA's own CRD
spec:
  group: autoscaling.k8s.io
  scope: Namespaced
  names: {kind: VerticalPodAutoscaler, plural: verticalpodautoscalers, singular: verticalpodautoscaler, shortNames: [vpa]}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
wait_established verticalpodautoscalers.autoscaling.k8s.io
# Resizes of trainer-1 by the operator are refused (422 Invalid, an admission decision, not an
# authorization one): the same ResizeFailed Event again, which the operator patches.
kubectl apply -f - > /dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: phasescale-test-refuse-resize}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [pods/resize]}
  matchConditions:
    - {name: operator, expression: "request.userInfo.username == '$sa_user'"}
    - {name: trainer-1, expression: "object.metadata.name == 'trainer-1'"}
  validations:
    - {expression: "false", message: "resizes of trainer-1 are refused by the test", reason: Invalid}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: phasescale-test-refuse-resize}
spec:
  policyName: phasescale-test-refuse-resize
  validationActions: [Deny]
YAML

# ------------------------------------------------------------------ helm install
helm_args=(--set "prometheus.url=http://127.0.0.1:$prom_port" --set prometheus.token=test-token
    --set tick=1s --set prometheus.scrapeInterval=1s --set replicaCount=2 --set logLevel=debug
    --set-file "model.file=$root/model/pretrained/default.model.json" --set "model.namespaces={$ns}"
    --set grafanaDashboard.enabled=true)
if "$helm" install phasescale "$root/helm/phasescale" -n "$release_ns" --create-namespace "${helm_args[@]}" \
    --wait --timeout 120s > "$work/helm-install.txt" 2>&1; then
    check "helm install (the chart's Deployment rolls out on KWOK nodes)" true
else
    cat "$work/helm-install.txt"; echo "FAIL: helm install"; exit 1
fi
check "the release is deployed" bash -c "'$helm' status phasescale -n $release_ns | grep -q 'STATUS: deployed'"
check "the chart's crds/ installed the PhaseAutoscaler CRD" \
    wait_established phaseautoscalers.phasescale.io
check "the Deployment has 2 available replicas" test \
    "$(kubectl get deployment "$sa" -n "$release_ns" -o jsonpath='{.status.availableReplicas}')" == 2
# NOTES: the PhaseAutoscaler it shows is accepted by the API server.
sed -n "/<<'YAML'/,/^ *YAML\$/p" "$work/helm-install.txt" | sed -e '1d' -e '$d' -e 's/^   //' > "$work/notes-pas.yaml"
check "NOTES shows a PhaseAutoscaler the API server accepts (dry run)" \
    kubectl apply --dry-run=server -f "$work/notes-pas.yaml" -o name
check "the dashboard ConfigMap for Grafana's sidecar is accepted, labelled grafana_dashboard=1" bash -c \
    "kubectl get configmap phasescale-dashboard -n $release_ns -o json | jq -e '.metadata.labels.grafana_dashboard == \"1\" and (.data[\"phasescale-dashboard.json\"] | fromjson | .uid == \"phasescale-operator\")' > /dev/null"
check "NOTES shows how to see the phases" grep -q 'kubectl get pods -L phasescale.io/phase' "$work/helm-install.txt"
check "deploy/ is accepted by the API server (server-side dry run)" bash -c \
    "kubectl apply --dry-run=server -f '$root/deploy/' > '$work/deploy-dry-run.txt' 2>&1 || { cat '$work/deploy-dry-run.txt'; exit 1; }"

# ------------------------------------------------------------------ workload
for i in 0 1; do
    trainer_pod "trainer-$i" "$ns" "kwok-node-$i" 7 28Gi | kubectl apply -f - > /dev/null
done
# InPlace, the chart's model ConfigMap, at most 4 cores and 8Gi: both pods are always
# asked to shrink from 7 cores and 28Gi.
kubectl apply -f - > /dev/null <<YAML
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: trainers, namespace: $ns}
spec:
  selector: {matchLabels: {app: train}}
  mode: InPlace
  model: {configMap: {name: phasescale-model, key: model.json}}
  cooldownSeconds: 1
  containerPolicies:
    - {containerName: "*", minAllowed: {cpu: 100m, memory: 256Mi}, maxAllowed: {cpu: "4", memory: 8Gi}}
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: other, namespace: $ns}
spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: other}}
YAML
wait_for 60 pods_running 2 -n "$ns" || { echo "FAIL: the trainer pods are not Running"; exit 1; }
"$cli" generate --jobs 2 --seed 5 --out "$work/trace.csv" > /dev/null
start_exporter "$replay" "$work/exporter.log" "$exporter_port" --trace "$work/trace.csv" --namespace "$ns" \
    --speed 15 --pod-map '#0=trainer-0,#1=trainer-1' --loop || { echo "FAIL: exporter not up"; exit 1; }
series_ready() { [[ $(sampled_containers "$prom_port" "$ns" 1m 4) == 2 ]]; }
wait_for 60 series_ready || { echo "FAIL: Prometheus has no samples of the 2 pods"; exit 1; }

# ------------------------------------------------------------------ the ServiceAccount's token
token=$(kubectl create token "$sa" -n "$release_ns" --duration=1h)
check "TokenRequest gave a token for the chart's ServiceAccount" test -n "$token"
cat > "$work/sa.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: $PHASESCALE_TESTENV_APISERVER_URL
    certificate-authority-data: $(base64 -w0 < "$PHASESCALE_TESTENV_CA_FILE")
users:
- name: operator
  user:
    token: $token
contexts:
- name: operator
  context: {cluster: testenv, user: operator, namespace: $release_ns}
current-context: operator
EOF
chmod 600 "$work/sa.kubeconfig"
check "the token authenticates as the ServiceAccount" bash -c \
    "kubectl --kubeconfig '$work/sa.kubeconfig' auth whoami -o jsonpath='{.status.userInfo.username}' | grep -qx '$sa_user'"
# The Prometheus token, from the Secret the chart made (the pod would mount it).
kubectl get secret phasescale-prometheus -n "$release_ns" -o jsonpath='{.data.token}' | base64 -d > "$work/prometheus-token"
check "the chart's Secret holds the Prometheus token" test "$(cat "$work/prometheus-token")" == test-token
# The Deployment's own arguments; outside the pod, the metrics address and the token's path
# change, and the kubeconfig is the ServiceAccount's.
mapfile -t operator_args < <(kubectl get deployment "$sa" -n "$release_ns" -o json |
    jq -r --arg m "127.0.0.1:$metrics_port" --arg t "$work/prometheus-token" '.spec.template.spec.containers[0].args[]
        | if startswith("--metrics-addr=") then "--metrics-addr=" + $m
          elif startswith("--prometheus-token-file=") then "--prometheus-token-file=" + $t else . end')
operator_args+=("--kubeconfig=$work/sa.kubeconfig")
echo "operator arguments: ${operator_args[*]}"
lease=$(printf '%s\n' "${operator_args[@]}" | sed -n 's/^--lease-name=//p')
has_operator_arg() { printf '%s\n' "${operator_args[@]}" | grep -qx -- "$1"; }
check "the Deployment runs the operator with --leader-elect (2 replicas)" has_operator_arg --leader-elect

# ------------------------------------------------------------------ the audit log
# audit_from OFFSET: the operator's completed requests since byte OFFSET of the audit log, one
# per line: verb group resource subresource code (the group "core" for "", "-" for none).
audit_size() { stat -c %s "$audit" 2>/dev/null || echo 0; }
# Non-resource requests (no objectRef) are left out: the operator's start-up check reads /version
# and the discovery of /api/v1, which every authenticated user may (the default system:discovery
# ClusterRole), not the chart's rules; discovery_from lists them.
audit_from() {
    tail -c +"$(($1 + 1))" "$audit" | jq -r --arg u "$sa_user" \
        'select(.user.username == $u and (.stage == "ResponseComplete" or .stage == "ResponseStarted")
                and .objectRef != null)
         | [.verb, (.objectRef.apiGroup // "core" | if . == "" then "core" else . end), (.objectRef.resource // "-"),
            (.objectRef.subresource // "-"), (.responseStatus.code | tostring)] | join(" ")'
}
discovery_from() {
    tail -c +"$(($1 + 1))" "$audit" | jq -r --arg u "$sa_user" \
        'select(.user.username == $u and .stage == "ResponseComplete" and .objectRef == null)
         | [.verb, .requestURI, (.responseStatus.code | tostring)] | join(" ")'
}
# The (verb, group, resource, subresource) pairs that the installed rules grant, one per line.
rule_object() {  # rule_object KIND NAME [NAMESPACE]: the installed object, as JSON
    kubectl get "$1" "$2" ${3:+-n "$3"} -o json
}
rbac_objects=("clusterrole $sa" "clusterrole $sa-crd-check" "clusterrole $sa-nodes" "role $sa-leader-election $release_ns")
granted() {
    local o
    for o in "${rbac_objects[@]}"; do
        # shellcheck disable=SC2086
        rule_object $o | jq -r '.rules[] | . as $r | .verbs[] as $v | $r.apiGroups[] as $g | $r.resources[]
            | split("/") | [$v, (if $g == "" then "core" else $g end), .[0], (.[1] // "-")] | join(" ")'
    done | sort -u
}
granted > "$work/granted.txt"
echo "the chart grants $(wc -l < "$work/granted.txt") (verb, resource) pairs"

# reset_state: what a fresh operator must write again, as the admin: no Lease, no phase label or
# annotations, trainer-0 back at 7 cores and 28Gi, no status.
reset_state() {
    kubectl delete lease "$lease" -n "$release_ns" --ignore-not-found > /dev/null
    kubectl label pods -n "$ns" --all phasescale.io/phase- > /dev/null 2>&1 || true
    kubectl annotate pods -n "$ns" --all phasescale.io/phase-name- phasescale.io/phase-since- \
        phasescale.io/recommendation- > /dev/null 2>&1 || true
    if [[ $(kubectl get pod trainer-0 -n "$ns" -o jsonpath='{.spec.containers[0].resources.requests.cpu}') != 7 ]]; then
        kubectl patch pod trainer-0 -n "$ns" --subresource resize --patch \
            '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"7","memory":"28Gi"},"limits":{"cpu":"7","memory":"28Gi"}}}]}}' > /dev/null
    fi
    kubectl patch pas trainers -n "$ns" --subresource status --type merge -p '{"status":null}' > /dev/null
}
operator_pid=
start_operator() {  # start_operator LOG
    start_bg "$1" "$operator" "${operator_args[@]}"
    operator_pid=$bg_pid
}
stop_operator() {
    [[ -n $operator_pid ]] || return 0
    local rc=0
    kill -TERM "$operator_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$operator_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$operator_pid" 2>/dev/null || true
    wait "$operator_pid" 2>/dev/null || rc=$?
    operator_pid=
    return "$rc"
}

# ------------------------------------------------------------------ 2. the full run
# full_run LABEL LOG: reset, run the operator until it has made every granted request (or
# 120 s), and check the audit log: everything granted made and allowed, nothing refused,
# nothing outside the rules. Leaves the operator running.
full_run() {
    local label=$1 log=$2
    reset_state
    offset=$(audit_size)
    start_operator "$log"
    all_made() {  # every granted pair has been requested and allowed
        audit_from "$offset" | awk '$5 != 401 && $5 != 403 {print $1, $2, $3, $4}' | sort -u > "$work/made.txt"
        [[ -z $(comm -23 "$work/granted.txt" "$work/made.txt") ]]
    }
    local t0=$SECONDS
    wait_for 120 all_made || true
    echo "$label: $(audit_from "$offset" | wc -l) requests in $((SECONDS - t0)) s"
    check "$label: every granted (verb, resource) was requested and allowed" test -z "$(comm -23 "$work/granted.txt" "$work/made.txt")"
    comm -23 "$work/granted.txt" "$work/made.txt" | sed 's/^/  never made: /'
    check "$label: no request of the operator was refused (no 401 or 403 in the audit log)" \
        test -z "$(audit_from "$offset" | awk '$5 == 401 || $5 == 403')"
    audit_from "$offset" | awk '$5 == 401 || $5 == 403' | sort | uniq -c | sed 's/^/  refused: /'
    check "$label: the operator made no request outside its rules" \
        test -z "$(audit_from "$offset" | awk '{print $1, $2, $3, $4}' | sort -u | comm -23 - "$work/granted.txt")"
    check "$label: its only requests outside the rules are the start-up check's /version and /api/v1, allowed" \
        test -z "$(discovery_from "$offset" | grep -vxE 'get /(version|api/v1) 200')"
    check "$label: the operator's log has no 403 or Forbidden" bash -c "! grep -qE '\\b403\\b|Forbidden' '$log'"
}
full_run "all namespaces" "$work/operator.log"
# What those calls did, as the e2e sees it.
check "pods labelled and annotated with their phase" bash -c "kubectl get pods -n $ns -o json | jq -e '[.items[] |
    select(.metadata.labels[\"phasescale.io/phase\"] != null and .metadata.annotations[\"phasescale.io/recommendation\"] != null)] | length == 2' > /dev/null"
check "trainer-0 resized in place (at most 4 cores)" bash -c \
    "[[ \$(kubectl get pod trainer-0 -n $ns -o jsonpath='{.spec.containers[0].resources.requests.cpu}') != 7 ]]"
check "a Resized Event, and a repeated ResizeFailed Event (count >= 2)" bash -c "kubectl get events -n $ns -o json | jq -e '
    ([.items[] | select(.reason == \"Resized\")] | length >= 1) and ([.items[] | select(.reason == \"ResizeFailed\" and .count >= 2)] | length >= 1)' > /dev/null"
check "the PhaseAutoscaler's status: 2 pods, the ConfigMap's model" bash -c \
    "kubectl get pas trainers -n $ns -o json | jq -e '.status.podsTracked == 2 and (.status.model | test(\"phasescale-model\"))' > /dev/null"
check "the operator holds the Lease" test -n "$(kubectl get lease "$lease" -n "$release_ns" -o jsonpath='{.spec.holderIdentity}')"
check "/readyz is 200 with the chart's rights" curl -fsS "http://127.0.0.1:$metrics_port/readyz" -o /dev/null
curl -fsS "http://127.0.0.1:$metrics_port/metrics" > "$work/metrics.txt"
# The dashboard's queries, once Prometheus has scraped the operator a few times.
dashboard=$root/deploy/grafana/phasescale-dashboard.json
# exposes EXPR: every phasescale_* metric of EXPR has samples in the operator's /metrics.
exposes() {
    local m
    for m in $(grep -oE '(^|[^a-z_])phasescale_[a-z_]+' <<< "$1" | sed -E 's/^[^p]//'); do
        grep -qE "^$m[{ ]" "$work/metrics.txt" || return 1
    done
}
dashboard_ok() {
    local title expr answer bad=0
    while IFS=$'\t' read -r title expr; do
        expr=${expr//\$__rate_interval/30s}; expr=${expr//\$__range/1h}
        expr=${expr//\$job/.*}; expr=${expr//\$namespace/.*}; expr=${expr//\$autoscaler/.*}
        if ! answer=$(prom_query "$prom_port" "$expr") || [[ $(jq -r .status <<< "$answer") != success ]]; then
            echo "  $title: query refused: $expr"; bad=1; continue
        fi
        # The operator's panels show data where it exposes their metrics (not the error
        # counters, not kube-state-metrics' panels: no kube-state-metrics here).
        if [[ $expr == *phasescale_* && $title != *error* && $expr != *kube_pod_labels* ]] &&
            exposes "$expr" && [[ $(jq '.data.result | length' <<< "$answer") == 0 ]]; then
            echo "  $title: no data: $expr"; bad=1
        fi
    done < <(jq -r '.panels[] | .title as $t | .targets[]? | [$t, .expr] | @tsv' "$dashboard")
    return $bad
}
not_exposed() {  # the dashboard's phasescale_* metrics that this operator does not expose
    jq -r '.. | .expr? // empty' "$dashboard" | grep -oE '(^|[^a-z_])phasescale_[a-z_]+' | sed -E 's/^[^p]//; s/_(bucket|sum|count)$//' |
        sort -u | while read -r m; do grep -qE "^${m}(_bucket|_sum|_count)?[{ ]" "$work/metrics.txt" || echo "$m"; done
}
wait_for 20 dashboard_ok > /dev/null || true
check "the dashboard's queries run, and its operator panels show data" dashboard_ok
echo "  dashboard metrics this operator did not expose (no panel data required): $(not_exposed | tr '\n' ' ')"
check "the operator stops cleanly on SIGTERM" stop_operator
check "the Lease was released (an update)" test -z "$(kubectl get lease "$lease" -n "$release_ns" -o jsonpath='{.spec.holderIdentity}')"

# ------------------------------------------------------------------ 3. every verb is needed
# without OBJECT RULE VERB: replace the installed object without that verb of that rule.
without() {  # without "KIND NAME [NS]" RULE_INDEX VERB
    # shellcheck disable=SC2086
    rule_object $1 | jq --argjson i "$2" --arg v "$3" '
        del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)
        | .rules[$i].verbs -= [$v] | if (.rules[$i].verbs | length) == 0 then del(.rules[$i]) else . end'
}
can_i() {  # can_i VERB GROUP RESOURCE SUBRESOURCE NAME: as the ServiceAccount
    local what=$3
    [[ $2 == core ]] || what=$3.$2
    [[ -z $5 ]] || what=$what/$5
    local sub=()
    [[ $4 == - ]] || sub=(--subresource "$4")
    kubectl auth can-i "$1" "$what" "${sub[@]}" -n "$ns" --as "$sa_user" > /dev/null 2>&1 ||
        kubectl auth can-i "$1" "$what" "${sub[@]}" -n "$release_ns" --as "$sa_user" > /dev/null 2>&1
}
cannot() { ! can_i "$@"; }
variants=0
for o in "${rbac_objects[@]}"; do
    # shellcheck disable=SC2086
    rule_object $o | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)' \
        > "$work/original.json"
    while IFS=$'\t' read -r i verb group resource subresource name; do
        pair="$verb $group $resource $subresource"
        variants=$((variants + 1))
        without "$o" "$i" "$verb" | kubectl replace -f - > /dev/null
        what=$resource; [[ $subresource == - ]] || what+=/$subresource; [[ -z $name ]] || what+=" $name"
        wait_for 10 cannot "$verb" "$group" "$resource" "$subresource" "$name" ||
            echo "  (the API server still allows $pair after 10 s)"
        reset_state
        offset=$(audit_size)
        start_operator "$work/operator-without-$variants.log"
        refused() { audit_from "$offset" | grep -qx "$pair 403"; }
        t0=$SECONDS
        wait_for 60 refused || true
        check "without $verb on $what: the operator's request is refused (403, after $((SECONDS - t0)) s)" refused
        stop_operator || true
        kubectl replace -f "$work/original.json" > /dev/null
        wait_for 10 can_i "$verb" "$group" "$resource" "$subresource" "$name" ||
            echo "  (the API server does not allow $pair again after 10 s)"
    done < <(jq -r '.rules | to_entries[] | .key as $i | .value as $r | $r.verbs[] as $v | $r.resources[]
        | split("/") | [$i, $v, ($r.apiGroups[0] | if . == "" then "core" else . end), .[0], (.[1] // "-"),
                        ($r.resourceNames[0] // "")] | @tsv' "$work/original.json")
done
check "every verb of every rule was removed once ($variants, as many as the granted pairs)" \
    test "$variants" == "$(wc -l < "$work/granted.txt")"

# ------------------------------------------------------------------ watched namespaces
# watchNamespaces: RoleBindings in the watched namespace instead of the ClusterRoleBinding;
# the same scenario runs with no request refused, and pods elsewhere are out of reach.
if "$helm" upgrade phasescale "$root/helm/phasescale" -n "$release_ns" --reuse-values \
    --set "watchNamespaces={$ns}" --wait --timeout 120s > "$work/helm-upgrade.txt" 2>&1; then
    check "helm upgrade with watchNamespaces={$ns}" true
    mapfile -t operator_args < <(kubectl get deployment "$sa" -n "$release_ns" -o json |
        jq -r --arg m "127.0.0.1:$metrics_port" --arg t "$work/prometheus-token" '.spec.template.spec.containers[0].args[]
            | if startswith("--metrics-addr=") then "--metrics-addr=" + $m
              elif startswith("--prometheus-token-file=") then "--prometheus-token-file=" + $t else . end')
    operator_args+=("--kubeconfig=$work/sa.kubeconfig")
    check "watchNamespaces: the Deployment passes --namespaces=$ns" has_operator_arg "--namespaces=$ns"
    check "watchNamespaces: a RoleBinding in $ns, no ClusterRoleBinding for the pod rules" bash -c \
        "kubectl get rolebinding $sa -n $ns > /dev/null && ! kubectl get clusterrolebinding $sa > /dev/null 2>&1"
    check "watchNamespaces: pods of other namespaces are out of reach" bash -c \
        "! kubectl auth can-i list pods -n default --as '$sa_user' > /dev/null 2>&1 && ! kubectl auth can-i patch pods -n default --as '$sa_user' > /dev/null 2>&1"
    full_run "watched namespace $ns" "$work/operator-namespaced.log"
    stop_operator || true
else
    cat "$work/helm-upgrade.txt"; check "helm upgrade with watchNamespaces={$ns}" false
fi

echo "install test: $((SECONDS - started)) s inside the control plane"
summary helm-install
