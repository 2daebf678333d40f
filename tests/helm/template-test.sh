#!/usr/bin/env bash
# Offline checks of the Helm chart and the plain manifests (no cluster needed):
#   - helm lint --strict, with the default values and with every optional part turned on;
#   - helm template: the Deployment's security (non-root numeric user, read-only root
#     filesystem, every capability dropped, no privilege escalation, seccomp RuntimeDefault),
#     probes (/healthz liveness, /readyz readiness), resource requests; --leader-elect and the
#     Lease rules exactly when leader election is on (forced for replicas > 1); --namespaces
#     and RoleBindings per watched namespace; the Prometheus token Secret and its mount; the
#     ServiceMonitor; rbac.create=false; the model ConfigMaps; capacityLoans (the flag and the
#     CapacityLoan controller's rules); bad values refused;
#   - deploy/ is the chart's default rendering (release phasescale, namespace
#     phasescale-system): the same objects, the same RBAC rules and bindings, the same
#     Deployment, Service and ServiceMonitor, but for labels;
#   - the chart's crds/ is crds/ (a symbolic link): every CRD rendered and packaged;
#   - `helm template` with no flags at all (Helm's default Kubernetes version, as GitOps tools
#     render), and values.schema.json: bad values files refused with the schema's message;
#   - kube-prometheus-stack (values-kube-prometheus-stack.yaml): the ServiceMonitor's and the
#     PrometheusRule's release label, the dashboard ConfigMap for Grafana's sidecar (its JSON is
#     deploy/grafana's), the alerts (promtool check rules; only metrics the operator defines,
#     `up` and kube-state-metrics'), tick and scrape interval;
#   - the Grafana dashboard is valid JSON, per autoscaler, in cores and bytes, and every
#     phasescale_* metric it uses is one the operator defines.
# Usage: template-test.sh SOURCE_DIR   (helm: $PHASESCALE_HELM, else tests/helm/build.sh's)
set -euo pipefail
root=$1
here=$(cd "$(dirname "$0")" && pwd)
helm_bin=${PHASESCALE_HELM:-$("$here/build.sh")}
# Helm says on stderr, at every load of the chart, that it follows the crds and dashboards
# links: not news here. A pipe, not a process substitution, so that the filtered stderr is
# written before helm() returns (a check may read it at once).
helm() {
    local rc
    { "$helm_bin" "$@" 2>&1 1>&3 3>&- | { grep -v 'found symbolic link in path' >&2 || true; }
      rc=${PIPESTATUS[0]}; } 3>&1
    return "$rc"
}
helm=helm
export -f helm; export helm_bin
# shellcheck source=lib.sh
source "$here/lib.sh"
chart=$root/helm/phasescale
work=$(mktemp -d "${TMPDIR:-/tmp}/phasescale-helm-template.XXXXXX")
trap 'rm -rf "$work"' EXIT

# render NAME [HELM ARGS...]: helm template of the chart into $work/NAME.json (a JSON object per line)
render() {
    local name=$1; shift
    "$helm" template phasescale "$chart" -n phasescale-system "$@" > "$work/$name.yaml" &&
        yaml2json "$helm" "$work/$name.yaml" > "$work/$name.json"
}
obj() {  # obj NAME KIND [NAME]: the object(s) of a rendering
    jq -c --arg k "$2" --arg n "${3:-}" 'select(.kind == $k and ($n == "" or .metadata.name == $n))' "$work/$1.json"
}
container() { obj "$1" Deployment | jq -c '.spec.template.spec.containers[0]'; }
args() { container "$1" | jq -r '.args[]'; }
has_arg() { args "$1" | grep -qxF -- "$2"; }
jtest() {  # jtest NAME KIND JQ-EXPRESSION: true when the expression holds for the object
    obj "$1" "$2" | jq -e "$3" > /dev/null
}
jqe() {  # jqe JQ-EXPRESSION FILE: the expression gives at least one value, and only true ones
    jq -s -e "[.[] | $1] | length > 0 and all" "$2" > /dev/null
}
export -f jqe
to() {  # to FILE COMMAND...: COMMAND with its output in FILE (the check's own line stays visible)
    local file=$1; shift
    "$@" > "$file"
}

# ---------------------------------------------------------------- no flags, the schema
check "Chart.yaml sets no kubeVersion (the operator checks the server; docs/helm.md)" bash -c "! grep -q '^kubeVersion' '$chart/Chart.yaml'"
check "helm template with no flags at all (Helm's default Kubernetes v1.20.0)" bash -c "'$helm' template '$chart' > /dev/null"
check "helm lint --strict with no flags" to /dev/null "$helm" lint --strict "$chart"
check "values.schema.json is valid JSON, draft-07, closed at the top level" jqt \
    '."$schema" == "http://json-schema.org/draft-07/schema#" and .additionalProperties == false' "$chart/values.schema.json"
check "every top-level value of values.yaml has a schema, and every schema a value" test \
    "$(yaml2json "$helm" "$chart/values.yaml" | jq -r 'keys[]' | sort | tr '\n' ' ')" == \
    "$(jq -r '.properties | keys[] | select(. != "global")' "$chart/values.schema.json" | sort | tr '\n' ' ')"
# refused NAME MESSAGE-REGEX YAML: a values file the schema refuses, in template and in lint,
# with the schema's message.
refused() {
    printf '%s\n' "$3" > "$work/bad-$1.yaml"
    check "schema refuses $1 (helm template)" bash -c \
        "! '$helm' template p '$chart' -f '$work/bad-$1.yaml' > /dev/null 2> '$work/bad-$1.err' && grep -q \"values don't meet the specifications of the schema\" '$work/bad-$1.err' && grep -qE -- '$2' '$work/bad-$1.err'"
    check "schema refuses $1 (helm lint)" bash -c \
        "! '$helm' lint '$chart' -f '$work/bad-$1.yaml' > '$work/bad-$1.lint' 2>&1 && grep -qE -- '$2' '$work/bad-$1.lint'"
}
refused "a string replica count" "/replicaCount.*(got string|string)" 'replicaCount: "two"'
refused "negative replicas" "/replicaCount.*minimum" 'replicaCount: -1'
refused "an unknown log level" "/logLevel.*one of" 'logLevel: verbose'
refused "an unknown top-level value" "additional properties .replicas. not allowed" 'replicas: 2'
refused "a misspelled nested value" "/serviceMonitor.*additional properties .enable. not allowed" 'serviceMonitor: {enable: true}'
refused "a tick without the duration grammar" "/tick.*does not match pattern" 'tick: 15 seconds'
refused "a Prometheus URL without a scheme" "/prometheus/url.*does not match pattern" 'prometheus: {url: prometheus:9090}'
refused "a port out of range" "/metrics/port.*maximum" 'metrics: {port: 70000}'
refused "a service type not of Kubernetes" "/service/type.*one of" 'service: {type: Ingress}'
refused "a ServiceMonitor interval not a Prometheus duration" "/serviceMonitor/interval.*does not match pattern" 'serviceMonitor: {interval: 1.5m}'
refused "a label value not a string" "/grafanaDashboard/labels/grafana_dashboard.*(got number|number)" 'grafanaDashboard: {labels: {grafana_dashboard: 1}}'
check "the values file for kube-prometheus-stack passes the schema (lint --strict)" \
    to /dev/null "$helm" lint --strict "$chart" -f "$chart/values-kube-prometheus-stack.yaml"

# ---------------------------------------------------------------- lint
check "helm lint --strict (default values)" to "$work/lint.txt" "$helm" lint --strict "$chart"
printf '{"format":"phasescale-model"}' > "$work/model.json"
check "helm lint --strict (everything on)" to "$work/lint2.txt" "$helm" lint --strict "$chart" --set replicaCount=2 \
    --set 'watchNamespaces={team-a,team-b}' --set prometheus.token=t0ken --set serviceMonitor.enabled=true \
    --set-file model.file="$work/model.json" --set 'model.namespaces={team-a}' --set capacityLoans.enabled=true \
    --set prometheusRule.enabled=true --set grafanaDashboard.enabled=true --set grafanaDashboard.folder=ML

# ---------------------------------------------------------------- defaults
render default
check "default: the objects are ServiceAccount, 3 ClusterRoles, 3 ClusterRoleBindings, Role, RoleBinding, Service, Deployment" \
    test "$(jq -r '.kind' "$work/default.json" | sort | tr '\n' ' ')" == \
    "ClusterRole ClusterRole ClusterRole ClusterRoleBinding ClusterRoleBinding ClusterRoleBinding Deployment Role RoleBinding Service ServiceAccount "
check "pod: runAsNonRoot with a numeric non-root user" jtest default Deployment \
    '.spec.template.spec.securityContext | .runAsNonRoot == true and (.runAsUser | type == "number" and . > 0)'
check "pod: seccomp RuntimeDefault" jtest default Deployment '.spec.template.spec.securityContext.seccompProfile.type == "RuntimeDefault"'
check "container: read-only root filesystem, no privilege escalation, runAsNonRoot" jtest default Deployment \
    '.spec.template.spec.containers[0].securityContext | .readOnlyRootFilesystem == true and .allowPrivilegeEscalation == false and .runAsNonRoot == true'
check "container: every capability dropped, none added" jtest default Deployment \
    '.spec.template.spec.containers[0].securityContext.capabilities | .drop == ["ALL"] and (has("add") | not)'
check "container: seccomp RuntimeDefault" jtest default Deployment \
    '.spec.template.spec.containers[0].securityContext.seccompProfile.type == "RuntimeDefault"'
check "no privileged container, no host namespaces or host paths" jtest default Deployment \
    '.spec.template.spec | (.hostNetwork // false) == false and (.hostPID // false) == false and ([.volumes[]? | select(has("hostPath"))] | length == 0) and ([.containers[].securityContext.privileged // false] | any | not)'
check "liveness probe: GET /healthz on the metrics port" jtest default Deployment \
    '.spec.template.spec.containers[0].livenessProbe.httpGet | .path == "/healthz" and .port == "metrics"'
check "readiness probe: GET /readyz on the metrics port" jtest default Deployment \
    '.spec.template.spec.containers[0].readinessProbe.httpGet | .path == "/readyz" and .port == "metrics"'
check "the metrics port is the one --metrics-addr serves" bash -c \
    "[[ \$(jq -r '.spec.template.spec.containers[0].ports[] | select(.name == \"metrics\") | .containerPort' <<< '$(obj default Deployment)') == 8080 ]] && grep -qx -- '--metrics-addr=0.0.0.0:8080' <<< '$(args default)'"
check "resource requests for cpu and memory, a memory limit" jtest default Deployment \
    '.spec.template.spec.containers[0].resources | (.requests.cpu and .requests.memory and .limits.memory) != null'
check "default: --leader-elect with the Lease in the release namespace" bash -c \
    "grep -qx -- --leader-elect <<< '$(args default)' && grep -qx -- --lease-namespace=phasescale-system <<< '$(args default)' && grep -qx -- --lease-name=phasescale-operator <<< '$(args default)'"
check "default: no --namespaces (all namespaces), bound by a ClusterRoleBinding" bash -c \
    "! grep -q -- '^--namespaces' <<< '$(args default)' && jqe 'select(.kind == \"ClusterRoleBinding\" and .roleRef.name == \"phasescale-operator\")' '$work/default.json' > /dev/null"
check "default: the Prometheus URL, tick and scrape interval flags" bash -c \
    "grep -qx -- --prometheus-url=http://prometheus-operated.monitoring.svc:9090 <<< '$(args default)' && grep -qx -- --tick=15s <<< '$(args default)' && grep -qx -- --scrape-interval=15s <<< '$(args default)'"
check "default: no Prometheus token, no Secret" bash -c "! grep -q -- --prometheus-token-file <<< '$(args default)' && [[ -z \$(jq -c 'select(.kind == \"Secret\")' '$work/default.json') ]]"
check "default: the image is repository:appVersion" test "$(container default | jq -r .image)" == "phasescale:0.1.0"
check "the Service selects the Deployment's pods, port metrics" bash -c \
    "[[ \$(jq -c '.spec.selector' <<< '$(obj default Service)') == \$(jq -c '.spec.template.metadata.labels' <<< '$(obj default Deployment)') ]] && jq -e '.spec.ports[0].targetPort == \"metrics\"' <<< '$(obj default Service)' > /dev/null"
check "every binding names the chart's ServiceAccount" bash -c \
    "jq -e -s '[.[] | select(.kind | test(\"Binding\")) | .subjects == [{\"kind\":\"ServiceAccount\",\"name\":\"phasescale-operator\",\"namespace\":\"phasescale-system\"}]] | (all and length == 4)' '$work/default.json' > /dev/null"
check "no wildcard, no secrets, no delete/escalate/bind/impersonate in any rule" bash -c \
    "jq -e -s '[.[] | select(.kind == \"ClusterRole\" or .kind == \"Role\") | .rules[] | (.verbs + .resources + .apiGroups)[]] | all(. != \"*\" and . != \"secrets\" and . != \"delete\" and . != \"deletecollection\" and . != \"escalate\" and . != \"bind\" and . != \"impersonate\")' '$work/default.json' > /dev/null"
check "every rule verb carries a comment that says why" bash -c \
    "awk '/^rules:/ {r = 1} /^---/ {r = 0} r && /^ *- (list|watch|get|patch|create|update)( |\$)/ && !/#/ {bad = 1; print} END {exit bad}' '$work/default.yaml'"

# ---------------------------------------------------------------- replicas and leader election
render replicas2 --set replicaCount=2
check "replicas 2: --leader-elect, Lease Role, RollingUpdate" bash -c \
    "grep -qx -- --leader-elect <<< '$(args replicas2)' && [[ \$(jq -r 'select(.kind == \"Role\") | .metadata.name' '$work/replicas2.json') == phasescale-operator-leader-election ]] && [[ \$(jq -r 'select(.kind == \"Deployment\") | .spec.replicas, .spec.strategy.type' '$work/replicas2.json' | tr '\n' ' ') == '2 RollingUpdate ' ]]"
render single --set leaderElection.enabled=false
check "one replica without leader election: no --leader-elect, no Lease rules, Recreate" bash -c \
    "! grep -q -- '--lease\|--leader-elect' <<< '$(args single)' && [[ -z \$(jq -c 'select(.kind == \"Role\" or .kind == \"RoleBinding\")' '$work/single.json') ]] && jqe 'select(.kind == \"Deployment\") | .spec.strategy.type == \"Recreate\"' '$work/single.json' > /dev/null"
check "replicas 2 without leader election is refused" bash -c \
    "! '$helm' template phasescale '$chart' --set replicaCount=2 --set leaderElection.enabled=false > /dev/null 2> '$work/err.txt' && grep -q 'replicaCount > 1 needs leaderElection.enabled' '$work/err.txt'"
render lease --set leaderElection.leaseName=my-lease
check "leaderElection.leaseName: the flag and the Role's resourceNames" bash -c \
    "grep -qx -- --lease-name=my-lease <<< '$(args lease)' && jqe 'select(.kind == \"Role\") | .rules[1].resourceNames == [\"my-lease\"]' '$work/lease.json' > /dev/null"

# ---------------------------------------------------------------- namespaces
render ns --set 'watchNamespaces={team-a,team-b}'
check "watchNamespaces: --namespaces=team-a,team-b" has_arg ns --namespaces=team-a,team-b
check "watchNamespaces: a RoleBinding to the operator's ClusterRole in each, no ClusterRoleBinding for it" bash -c \
    "[[ \$(jq -r 'select(.kind == \"RoleBinding\" and .roleRef.name == \"phasescale-operator\") | .metadata.namespace' '$work/ns.json' | sort | tr '\n' ' ') == 'team-a team-b ' ]] && [[ -z \$(jq -c 'select(.kind == \"ClusterRoleBinding\" and .roleRef.name == \"phasescale-operator\")' '$work/ns.json') ]]"
check "watchNamespaces: the CRD check stays cluster-wide" bash -c \
    "jqe 'select(.kind == \"ClusterRoleBinding\" and .roleRef.name == \"phasescale-operator-crd-check\")' '$work/ns.json' > /dev/null"
check "watchNamespaces: the node rules stay cluster-wide (nodes are cluster-scoped)" bash -c \
    "jqe 'select(.kind == \"ClusterRoleBinding\" and .roleRef.name == \"phasescale-operator-nodes\")' '$work/ns.json' > /dev/null"

# ---------------------------------------------------------------- Prometheus credentials
render token --set prometheus.token=s3cret
check "prometheus.token: a Secret holding it" bash -c \
    "[[ \$(jq -r 'select(.kind == \"Secret\") | .data.token' '$work/token.json' | base64 -d) == s3cret ]]"
check "prometheus.token: mounted and passed as --prometheus-token-file" bash -c \
    "grep -qx -- --prometheus-token-file=/var/run/secrets/phasescale/prometheus/token <<< '$(args token)' && jqe 'select(.kind == \"Deployment\") | .spec.template.spec.volumes[] | select(.name == \"prometheus-credentials\") | .secret.secretName == \"phasescale-prometheus\"' '$work/token.json' > /dev/null && jq -e '.volumeMounts[] | select(.mountPath == \"/var/run/secrets/phasescale/prometheus\") | .readOnly' <<< '$(container token)' > /dev/null"
render existing --set prometheus.existingSecret=prom-creds --set prometheus.secretKey=bearer
check "prometheus.existingSecret: that Secret mounted, its key passed, no Secret created" bash -c \
    "grep -qx -- --prometheus-token-file=/var/run/secrets/phasescale/prometheus/bearer <<< '$(args existing)' && jqe 'select(.kind == \"Deployment\") | .spec.template.spec.volumes[] | select(.name == \"prometheus-credentials\") | .secret.secretName == \"prom-creds\"' '$work/existing.json' > /dev/null && [[ -z \$(jq -c 'select(.kind == \"Secret\")' '$work/existing.json') ]]"
check "an empty prometheus.url is refused" bash -c "! '$helm' template p '$chart' --set prometheus.url= > /dev/null 2>&1"

# ---------------------------------------------------------------- other values
render sm --set serviceMonitor.enabled=true --set serviceMonitor.labels.release=kps
check "serviceMonitor.enabled: a ServiceMonitor on the metrics port, with the extra labels" bash -c \
    "jqe 'select(.kind == \"ServiceMonitor\") | .spec.endpoints[0].port == \"metrics\" and .metadata.labels.release == \"kps\"' '$work/sm.json' > /dev/null"
check "default: no ServiceMonitor" bash -c "[[ -z \$(jq -c 'select(.kind == \"ServiceMonitor\")' '$work/default.json') ]]"
render norbac --set rbac.create=false
check "rbac.create=false: no Role, ClusterRole or binding" bash -c \
    "[[ -z \$(jq -c 'select(.kind | test(\"Role\"))' '$work/norbac.json') ]]"
render loans --set capacityLoans.enabled=true \
    --set 'capacityLoans.elasticJobResources[0].apiGroup=apps' --set 'capacityLoans.elasticJobResources[0].resources={deployments}' \
    --set 'capacityLoans.elasticJobResources[1].apiGroup=kubeflow.org' --set 'capacityLoans.elasticJobResources[1].resources={pytorchjobs}'
check "capacityLoans.enabled: --capacity-loans" has_arg loans --capacity-loans
check "default: no --capacity-loans, no capacity-loan rules" bash -c \
    "! grep -qxF -- --capacity-loans <<< '$(args default)' && [[ -z \$(jq -c 'select(.metadata.name == \"phasescale-operator-capacity-loans\")' '$work/default.json') ]]"
loan_rules() {  # the capacity-loan ClusterRole's rules as "group resource verb" lines, sorted
    obj loans ClusterRole phasescale-operator-capacity-loans |
        jq -r '.rules[] | .apiGroups[] as $g | .resources[] as $r | .verbs[] as $v | "\($g) \($r) \($v)"' | sort | tr '\n' ';'
}
check "capacityLoans.enabled: the controller's rules (operator/loan), bound cluster-wide, for the elastic job resources given" bash -c \
    "[[ '$(loan_rules)' == ' events create; events patch; nodes list; nodes patch; nodes watch; pods list; pods watch; pods/eviction create;apps deployments list;apps deployments/scale get;apps deployments/scale patch;kubeflow.org pytorchjobs list;kubeflow.org pytorchjobs/scale get;kubeflow.org pytorchjobs/scale patch;phasescale.io capacityloans list;phasescale.io capacityloans/status patch;' ]] &&
     jqe 'select(.kind == \"ClusterRoleBinding\" and .roleRef.name == \"phasescale-operator-capacity-loans\")' '$work/loans.json'"
render model --set-file model.file="$root/model/pretrained/default.model.json" --set 'model.namespaces={team-a,team-b}'
check "model.file: a ConfigMap in each namespace, holding the file byte for byte" bash -c \
    "for ns in team-a team-b; do jq -j --arg ns \$ns 'select(.kind == \"ConfigMap\" and .metadata.namespace == \$ns) | .data[\"model.json\"]' '$work/model.json' | cmp -s - '$root/model/pretrained/default.model.json' || exit 1; done"
render digest --set image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
check "image.digest pins the image" test "$(container digest | jq -r .image)" == \
    "phasescale@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
render extra --set logLevel=debug --set 'extraArgs={--prometheus-timeout=20s}'
check "logLevel and extraArgs reach the command line" bash -c \
    "grep -qx -- --log-level=debug <<< '$(args extra)' && grep -qx -- --prometheus-timeout=20s <<< '$(args extra)'"
render tenants --set prometheus.caConfigMap=prom-ca --set 'prometheus.allowedUrls={http://team-b-prom:9090,https://shared-prom:9090}'
check "prometheus.allowedUrls: --prometheus-allowed-urls; default: none (only the operator's own Prometheus)" bash -c \
    "grep -qx -- --prometheus-allowed-urls=http://team-b-prom:9090,https://shared-prom:9090 <<< '$(args tenants)' && ! grep -q -- --prometheus-allowed-urls <<< '$(args default)'"
check "prometheus.caConfigMap: --prometheus-ca-file points into its mount; default: none" bash -c \
    "grep -qx -- --prometheus-ca-file=/etc/phasescale/prometheus-ca/ca.crt <<< '$(args tenants)' && ! grep -q -- --prometheus-ca-file <<< '$(args default)'"
check "prometheus.caConfigMap: the ConfigMap mounted read-only at /etc/phasescale/prometheus-ca" jtest tenants Deployment \
    '(.spec.template.spec.volumes[] | select(.name == "prometheus-ca") | .configMap.name == "prom-ca") and (.spec.template.spec.containers[0].volumeMounts[] | select(.name == "prometheus-ca") | .readOnly and .mountPath == "/etc/phasescale/prometheus-ca")'

# ---------------------------------------------------------------- kube-prometheus-stack
dashboard=$root/deploy/grafana/phasescale-dashboard.json
render kps -f "$chart/values-kube-prometheus-stack.yaml"
check "kube-prometheus-stack: the objects are the default ones plus ServiceMonitor, PrometheusRule, dashboard ConfigMap" test \
    "$(jq -r '.kind' "$work/kps.json" | sort | tr '\n' ' ')" == \
    "ClusterRole ClusterRole ClusterRole ClusterRoleBinding ClusterRoleBinding ClusterRoleBinding ConfigMap Deployment PrometheusRule Role RoleBinding Service ServiceAccount ServiceMonitor "
check "kube-prometheus-stack: ServiceMonitor labelled release=kube-prometheus-stack, every 30s, keeping the autoscalers' namespace label" \
    jtest kps ServiceMonitor '.metadata.labels.release == "kube-prometheus-stack" and .spec.endpoints[0].interval == "30s" and .spec.endpoints[0].honorLabels == true'
check "kube-prometheus-stack: the ServiceMonitor selects the metrics Service" bash -c \
    "[[ \$(jq -c '.spec.selector.matchLabels' <<< '$(obj kps ServiceMonitor)') == \$(jq -c '.spec.selector' <<< '$(obj kps Service)') ]]"
check "kube-prometheus-stack: PrometheusRule labelled release=kube-prometheus-stack" \
    jtest kps PrometheusRule '.metadata.labels.release == "kube-prometheus-stack"'
check "kube-prometheus-stack: --scrape-interval=30s and --tick=30s (the stack's cAdvisor interval, at most 30s)" bash -c \
    "grep -qx -- --scrape-interval=30s <<< '$(args kps)' && grep -qx -- --tick=30s <<< '$(args kps)'"
check "dashboard ConfigMap: labelled grafana_dashboard=1 for the sidecar, folder annotation grafana_folder" \
    jtest kps ConfigMap '.metadata.labels.grafana_dashboard == "1" and .metadata.annotations.grafana_folder == "phasescale" and .metadata.namespace == "phasescale-system"'
check "dashboard ConfigMap: its JSON is deploy/grafana/phasescale-dashboard.json" test \
    "$(obj kps ConfigMap | jq -r '.data["phasescale-dashboard.json"]' | jq -S -c .)" == "$(jq -S -c . "$dashboard")"
check "helm/phasescale/dashboards is a link to deploy/grafana (one copy of the JSON)" \
    test "$(readlink "$chart/dashboards")" == ../../deploy/grafana
render dash-ns --set grafanaDashboard.enabled=true --set grafanaDashboard.namespace=monitoring \
    --set 'grafanaDashboard.labels.grafana_dashboard=phasescale' --set grafanaDashboard.folderAnnotation=k8s-sidecar-target-directory --set grafanaDashboard.folder=/tmp/dashboards/ml
check "grafanaDashboard: namespace, label value and folder annotation configurable" jtest dash-ns ConfigMap \
    '.metadata.namespace == "monitoring" and .metadata.labels.grafana_dashboard == "phasescale" and .metadata.annotations["k8s-sidecar-target-directory"] == "/tmp/dashboards/ml"'
render dash-nofolder --set grafanaDashboard.enabled=true
check "grafanaDashboard without a folder: no annotation" jtest dash-nofolder ConfigMap '.metadata.annotations == null'
check "default: no PrometheusRule, no dashboard ConfigMap" bash -c \
    "[[ -z \$(jq -c 'select(.kind == \"PrometheusRule\" or .kind == \"ConfigMap\")' '$work/default.json') ]]"
render rule-labels --set prometheusRule.enabled=true --set prometheusRule.alertLabels.team=ml
check "prometheusRule.alertLabels: on every alert, beside its severity" jtest rule-labels PrometheusRule \
    '[.spec.groups[].rules[] | .labels.team == "ml" and .labels.severity == "warning"] | all'
obj kps PrometheusRule | jq '.spec' > "$work/rules.json"
check "alerts: operator down, no leader, resizes failing, OOM kills after a resize, a PhaseAutoscaler not ready" test \
    "$(jq -r '[.groups[].rules[].alert] | join(" ")' "$work/rules.json")" == \
    "PhasescaleOperatorDown PhasescaleNoLeader PhasescaleResizesFailing PhasescaleOOMKillAfterResize PhasescaleAutoscalerNotReady"
check "every alert has a summary, a description and a severity" jqt \
    '[.groups[].rules[] | (.annotations.summary | length > 0) and (.annotations.description | length > 0) and (.labels.severity | length > 0)] | all' "$work/rules.json"
check "every alert but the OOM kill waits (for) before it fires" jqt \
    '[.groups[].rules[] | select(.alert != "PhasescaleOOMKillAfterResize") | .for | test("^[0-9]+m$")] | all' "$work/rules.json"
check "PhasescaleOperatorDown names the chart's metrics Service as job, in the release namespace" jqt \
    '.groups[].rules[] | select(.alert == "PhasescaleOperatorDown") | .expr | contains("job=\"phasescale-operator-metrics\", namespace=\"phasescale-system\"")' "$work/rules.json"
if command -v promtool > /dev/null; then
    check "promtool check rules" bash -c "promtool check rules '$work/rules.json' > '$work/promtool.txt' 2>&1 || { cat '$work/promtool.txt'; exit 1; }"
else
    echo "note: no promtool (Debian package prometheus); the rules' syntax is not checked"
fi
# The metric names of PromQL expressions (selectors; not functions, labels or keywords).
metric_names() {
    sed -E 's/"[^"]*"//g; s/\{[^}]*\}/{}/g; s/(by|without|on|ignoring|group_left|group_right) *\([^)]*\)//g' |
        grep -oP '(?<![a-zA-Z0-9_:.$])[a-zA-Z_:][a-zA-Z0-9_:]*(?![a-zA-Z0-9_:]|\s*\()' |
        grep -vxE 'by|without|on|ignoring|group_left|group_right|and|or|unless|bool|offset' | sort -u
}
# What the operator defines: every "phasescale_..." string of its sources.
defined=$(grep -rhoE '"phasescale_[a-z_]+"' "$root/operator" --include=*.cpp --include=*.hpp | tr -d '"' | sort -u)
rule_metrics=$(jq -r '.groups[].rules[].expr' "$work/rules.json" | metric_names)
check "the alerts read only phasescale_* metrics and up ($(echo $rule_metrics | wc -w) metrics)" \
    test -z "$(grep -vxE 'up|phasescale_[a-z_]+' <<< "$rule_metrics")"

# ---------------------------------------------------------------- the CRDs: one source of truth
# helm/phasescale/crds is a symbolic link to crds/ (Helm follows it in lint, template, install
# and package, and a packaged chart holds the files themselves).
check "helm/phasescale/crds is a link to ../../crds" test "$(readlink "$chart/crds")" == ../../crds
crd_names() { for f in "$root"/crds/*.yaml; do yaml2json "$helm" "$f"; done | jq -r 'select(.kind == "CustomResourceDefinition") | .metadata.name' | sort; }
"$helm" template phasescale "$chart" -n phasescale-system --include-crds > "$work/with-crds.yaml"
check "helm template --include-crds renders every CRD of crds/ ($(crd_names | wc -l))" test \
    "$(yaml2json "$helm" "$work/with-crds.yaml" | jq -r 'select(.kind == "CustomResourceDefinition") | .metadata.name' | sort)" == "$(crd_names)"
"$helm" package "$chart" -d "$work" > /dev/null
packaged_same() {
    local f
    for f in "$root"/crds/*; do
        tar -xzOf "$work"/phasescale-*.tgz "phasescale/crds/$(basename "$f")" | cmp -s - "$f" || return 1
    done
}
check "helm package holds each file of crds/, byte for byte" packaged_same
check "helm package holds the dashboard of deploy/grafana, byte for byte" bash -c \
    "tar -xzOf '$work'/phasescale-*.tgz phasescale/dashboards/phasescale-dashboard.json | cmp -s - '$root/deploy/grafana/phasescale-dashboard.json'"

# ---------------------------------------------------------------- deploy/ against the chart
yaml2json "$helm" "$root"/deploy/*.yaml > "$work/deploy.json"
yaml2json "$helm" "$root"/deploy/monitoring/*.yaml > "$work/deploy-monitoring.json"
# The comparable part of an object: everything but labels and annotations.
norm() { jq -S -c 'del(.metadata.labels, .metadata.annotations)' "$@" | sort; }
ids() { jq -r '[.kind, .metadata.namespace // "", .metadata.name] | join("/")' "$@" | sort; }
check "deploy/ has a Namespace phasescale-system" bash -c \
    "jqe 'select(.kind == \"Namespace\" and .metadata.name == \"phasescale-system\")' '$work/deploy.json' > /dev/null"
jq -c 'select(.kind != "Namespace")' "$work/deploy.json" > "$work/deploy-objects.json"
check "deploy/ and the chart's default rendering have the same objects" \
    test "$(ids "$work/deploy-objects.json")" == "$(ids "$work/default.json")"
for kind in ClusterRole ClusterRoleBinding Role RoleBinding ServiceAccount Deployment Service; do
    check "deploy/ and the chart agree on every $kind (labels aside)" test \
        "$(jq -c --arg k $kind 'select(.kind == $k)' "$work/deploy-objects.json" | norm)" == \
        "$(jq -c --arg k $kind 'select(.kind == $k)' "$work/default.json" | norm)"
done
render smd --set serviceMonitor.enabled=true --set prometheusRule.enabled=true
for kind in ServiceMonitor PrometheusRule; do
    check "deploy/monitoring/ has the chart's $kind (labels aside)" test \
        "$(jq -c --arg k $kind 'select(.kind == $k)' "$work/deploy-monitoring.json" | norm)" == \
        "$(jq -c --arg k $kind 'select(.kind == $k)' "$work/smd.json" | norm)"
done
check "deploy/ keeps the comments that justify each verb" bash -c \
    "awk '/^rules:/ {r = 1} /^---/ {r = 0} r && /^ *- (list|watch|get|patch|create|update)( |\$)/ && !/#/ {bad = 1; print} END {exit bad}' '$root/deploy/10-rbac.yaml'"

# ---------------------------------------------------------------- Grafana dashboard
check "the dashboard is valid JSON with unique panel ids and variables datasource, namespace, autoscaler, job" jqt \
    '([.panels[].id] | length == (unique | length)) and ([.templating.list[].name] == ["datasource", "namespace", "autoscaler", "job"])' "$dashboard"
check "the dashboard opens with savings and risk, per autoscaler" jqt \
    '(.panels[0].type == "row" and (.panels[0].title | test("Savings and risk"))) and ([.panels[1:12][] | .targets[].expr | test("autoscaler=~\"\\$autoscaler\"")] | all)' "$dashboard"
check "CPU panels in cores, memory panels in bytes (IEC)" jqt \
    '[.panels[] | select(.type != "row") | . as $p | [.targets[].expr] | join(" ") as $e
      | if ($e | test("cpu_cores|cpu_usage_seconds|resource=\"cpu\"")) then $p.fieldConfig.defaults.unit == "suffix: cores"
        elif ($e | test("memory_bytes|memory_working_set|resource=\"memory\"")) then $p.fieldConfig.defaults.unit == "bytes"
        else true end] | all' "$dashboard"
check "the dashboard shows requested vs recommended, resizes by reason, OOM kills, phases, readiness, loans, build info" bash -c \
    "for m in requested_cpu_cores recommended_cpu_cores requested_memory_bytes recommended_memory_bytes autoscaler_resizes_total oom_kills_after_resize_total containers_in_phase autoscaler_ready capacity_loans_loaned capacity_loan_returns_total capacity_loan_evictions_total build_info tick_step_seconds namespaces_skipped_total samples_rejected_total writes_waiting; do
         jq -r '.. | .expr? // empty' '$dashboard' | grep -q \"phasescale_\$m\" || { echo \"  missing: phasescale_\$m\"; exit 1; }
     done"
used=$( (jq -r '.. | .expr? // empty' "$dashboard"; jq -r '.groups[].rules[].expr' "$work/rules.json") |
    grep -oE '(^|[^a-z_])phasescale_[a-z_]+' | sed -E 's/^[^p]//' | sed -E 's/_(bucket|sum|count)$//' | sort -u)
unknown_metrics() { comm -23 <(echo "$used") <(echo "$defined"); }
check "every phasescale_* metric of the dashboard and the alerts is defined by the operator ($(echo $used | wc -w) used)" \
    test -z "$(unknown_metrics)"
# Not a failure (the operator may gain a metric before the dashboard a panel), but said.
missing=$(comm -13 <(echo "$used") <(echo "$defined") | tr '\n' ' ')
[[ -z ${missing// } ]] || echo "note: metrics the operator defines that the dashboard does not show: $missing"
[[ -z $(unknown_metrics) ]] || echo "  not defined by the operator: $(unknown_metrics | tr '\n' ' ')"
check "the dashboard reads only phasescale_*, cAdvisor's container_* and kube-state-metrics' kube_pod_* metrics" \
    test -z "$(jq -r '.. | .expr? // empty' "$dashboard" | metric_names | grep -vE '^(phasescale|container|kube_pod)_')"
ksm_used=$(jq -r '.. | .expr? // empty' "$dashboard" | metric_names | grep -E '^kube_' | tr '\n' ' ')
check "the dashboard's kube-state-metrics metrics are those docs/monitoring.md allowlists ($ksm_used)" bash -c \
    "for m in $ksm_used; do grep -q \"\$m\" '$root/docs/monitoring.md' || { echo \"  not in docs/monitoring.md: \$m\"; exit 1; }; done"

summary helm-template
