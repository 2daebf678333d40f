#!/usr/bin/env bash
# Installs crds/ into a running test control plane (run it under tests/testenv/with-testenv.sh)
# and checks what the PhaseAutoscaler CRD promises: it is established, defaults are filled in,
# bad specs are refused with a message naming the field, status is a subresource of its own,
# and `kubectl get pas` shows the printer columns.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=../lib.sh
source tests/lib.sh  # wait_established; check is this script's own (below)
kubectl() { "$PHASESCALE_TESTENV_BIN/kubectl" "$@"; }
passed=0 failed=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@" >/tmp/check-crd.$$ 2>&1; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAILED: $what"; sed 's/^/  /' /tmp/check-crd.$$; fi
}
refused() {  # description, expected text in the error, manifest on stdin
  local what=$1 expected=$2 out
  if out=$(kubectl apply -f - 2>&1); then failed=$((failed + 1)); echo "FAILED: $what: accepted"; return; fi
  if grep -qF -- "$expected" <<<"$out"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAILED: $what: error does not mention '$expected':"; echo "  $out"; fi
}
jsonpath() { kubectl get pas "$1" -o "jsonpath={$2}"; }
equals() { [[ "$(jsonpath "$1" "$2")" == "$3" ]] || { echo "$2 is '$(jsonpath "$1" "$2")', expected '$3'"; return 1; }; }

check "the CRD installs" kubectl apply -f crds/
check "the CRD is established" wait_established phaseautoscalers.phasescale.io

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: minimal}
spec:
  selector: {matchLabels: {app: train}}
YAML
check "mode defaults to Off (recommend only, as the VPA's Off)" equals minimal .spec.mode Off
check "model defaults to the built-in one" equals minimal .spec.model.name default
check "CPU quantile defaults to p95" equals minimal .spec.resources.cpu.quantile 0.95
check "memory quantile defaults to p99" equals minimal .spec.resources.memory.quantile 0.99
check "memory keeps 384Mi above its usage by default" equals minimal .spec.resources.memory.minHeadroom 384Mi
check "the CPU target fulfilment defaults to 95%" equals minimal .spec.resources.cpu.targetFulfilment 0.95
check "debounce defaults to 2" equals minimal .spec.debounceSamples 2
check "minChange defaults to 5%" equals minimal .spec.minChange 0.05
check "the short name works" kubectl get pas minimal

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: full}
spec:
  selector: {matchExpressions: [{key: app, operator: In, values: [train]}]}
  mode: InPlace
  model: {configMap: {name: models, key: bert.json}}
  containerPolicies:
    - {containerName: "*", minAllowed: {cpu: 100m, memory: 256Mi}, maxAllowed: {cpu: 8, memory: 64Gi}}
    - {containerName: sidecar, mode: "Off"}
  resources: {cpu: {quantile: 0.99, safetyMargin: 0.2}}
  cooldownSeconds: 120
  proactive: true
  prometheus: {url: "http://prometheus:9090", featureQueries: {cpu.usage.cores: "rate(x[{window}])"}}
YAML
check "a full spec is kept" equals full .spec.containerPolicies[1].mode Off
check "container policies get controlledValues" equals full .spec.containerPolicies[0].controlledValues RequestsAndLimits

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: vpa-like}
spec:
  selector: {}
  mode: Recommend
  resourcePolicy:
    containerPolicies:
      - {containerName: "*", maxAllowed: {cpu: 4}}
YAML
check "Recommend (the older name of Off) is still accepted" equals vpa-like .spec.mode Recommend
check "resourcePolicy.containerPolicies as in the VPA, defaults filled" equals vpa-like \
  .spec.resourcePolicy.containerPolicies[0].controlledValues RequestsAndLimits
refused "both resourcePolicy.containerPolicies and the deprecated containerPolicies" 'not both' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: bad-both}
spec:
  selector: {}
  containerPolicies: [{containerName: a}]
  resourcePolicy: {containerPolicies: [{containerName: b}]}
YAML
refused "an unknown mode" 'spec.mode' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: bad-mode}
spec: {selector: {}, mode: Sometimes}
YAML
refused "a quantile the model does not keep" 'spec.resources.cpu.quantile' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: bad-quantile}
spec: {selector: {}, resources: {cpu: {quantile: 0.8}}}
YAML
refused "a CPU target fulfilment of 1 or more" 'spec.resources.cpu.targetFulfilment' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: bad-target}
spec: {selector: {}, resources: {cpu: {targetFulfilment: 1}}}
YAML
refused "a memory headroom that is no quantity" 'spec.resources.memory.minHeadroom' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: bad-headroom}
spec: {selector: {}, resources: {memory: {minHeadroom: lots}}}
YAML
refused "two models at once" 'exactly one of model.name and model.configMap' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: bad-model}
spec: {selector: {}, model: {name: default, configMap: {name: m, key: k}}}
YAML
refused "a malformed quantity" 'spec.containerPolicies[0].minAllowed.cpu' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: bad-quantity}
spec: {selector: {}, containerPolicies: [{containerName: "*", minAllowed: {cpu: lots}}]}
YAML
refused "no selector" 'spec.selector' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: no-selector}
spec: {mode: "Off"}
YAML

# status goes through its own subresource: a plain update does not change it
check "status is updated through the status subresource" kubectl patch pas minimal --subresource status --type merge \
  -p '{"status":{"model":"default","podsTracked":3,"phasesSeen":2,"lastResize":{"time":"2026-11-29T12:00:00Z","pod":"p","container":"c"},"conditions":[{"type":"Ready","status":"True","reason":"Tracking","message":"3 pods","lastTransitionTime":"2026-11-29T12:00:00Z"}],"containersPerPhase":{"phase-0":2,"unknown":1},"recommendation":{"containerRecommendations":[{"containerName":"main","target":{"cpu":"1500m","memory":"2048Mi"},"lowerBound":{"cpu":"1m","memory":"1Mi"},"upperBound":{"cpu":"2","memory":"3Gi"},"uncappedTarget":{"cpu":"1500m","memory":"2048Mi"}}]}}}'
check "the status was stored" equals minimal .status.podsTracked 3
check "status.recommendation was stored" equals minimal .status.recommendation.containerRecommendations[0].uncappedTarget.memory 2048Mi
check "status.containersPerPhase was stored" equals minimal .status.containersPerPhase.unknown 1
kubectl patch pas minimal --type merge -p '{"status":{"podsTracked":99}}' >/dev/null 2>&1 || true
check "a main-resource patch leaves status alone" equals minimal .status.podsTracked 3
check "printer columns show mode, ready, pods, CPU and memory targets" bash -c \
  "'$PHASESCALE_TESTENV_BIN/kubectl' get pas minimal | grep -E '^NAME +MODE +READY +PODS +CPU +MEMORY +LAST RESIZE +AGE\$' && '$PHASESCALE_TESTENV_BIN/kubectl' get pas minimal --no-headers | grep -E '^minimal +Off +True +3 +1500m +2048Mi '"
check "-o wide adds the model and the phases seen" bash -c \
  "'$PHASESCALE_TESTENV_BIN/kubectl' get pas minimal -o wide | grep -E '^NAME +MODE +READY +PODS +CPU +MEMORY +LAST RESIZE +AGE +MODEL +PHASES\$'"

rm -f /tmp/check-crd.$$
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
