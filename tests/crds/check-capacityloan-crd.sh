#!/usr/bin/env bash
# Installs crds/ into a running test control plane (run it under tests/testenv/with-testenv.sh)
# and checks what the CapacityLoan CRD promises: it is established and cluster-scoped, defaults
# are filled in, bad specs are refused with a message naming the field, status is a subresource
# of its own, and `kubectl get cl` shows the printer columns.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=../lib.sh
source tests/lib.sh  # wait_established; check is this script's own (below)
kubectl() { "$PHASESCALE_TESTENV_BIN/kubectl" "$@"; }
passed=0 failed=0
out_file=$(mktemp)
trap 'rm -f "$out_file"' EXIT
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@" >"$out_file" 2>&1; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAILED: $what"; sed 's/^/  /' "$out_file"; fi
}
refused() {  # description, expected text in the error, manifest on stdin
  local what=$1 expected=$2 out
  if out=$(kubectl apply -f - 2>&1); then failed=$((failed + 1)); echo "FAILED: $what: accepted"; return; fi
  if grep -qF -- "$expected" <<<"$out"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAILED: $what: error does not mention '$expected':"; echo "  $out"; fi
}
jsonpath() { kubectl get cl "$1" -o "jsonpath={$2}"; }
equals() { [[ "$(jsonpath "$1" "$2")" == "$3" ]] || { echo "$2 is '$(jsonpath "$1" "$2")', expected '$3'"; return 1; }; }

check "the CRDs install" kubectl apply -f crds/
check "the CRD is established" wait_established capacityloans.phasescale.io
check "the CRD is cluster-scoped" bash -c \
  "[[ \$('$PHASESCALE_TESTENV_BIN/kubectl' get crd capacityloans.phasescale.io -o jsonpath='{.spec.scope}') == Cluster ]]"

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: minimal}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {requiredServers: 2}
YAML
check "headroomServers defaults to 0" equals minimal .spec.inference.headroomServers 0
check "gpuResource defaults to nvidia.com/gpu" equals minimal .spec.gpuResource nvidia.com/gpu
check "training defaults to no elastic jobs" equals minimal .spec.training.elasticJobs '[]'
check "the short name works" kubectl get cl minimal
check "it has no namespace" equals minimal .metadata.namespace ''

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: full}
spec:
  inferencePool: {nodeSelector: {matchExpressions: [{key: pool, operator: In, values: [inference]}]}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {requiredServers: 0, headroomServers: 1}
  training:
    podSelector: {matchLabels: {role: training}}
    elasticJobs:
      - {group: apps, version: v1, resource: deployments, namespace: ml, selector: {matchLabels: {elastic: "true"}}, maxReplicas: 8, gpusPerWorker: 2}
      - {version: v1, resource: trainingjobs}
  gpuResource: amd.com/gpu
YAML
check "a full spec is kept" equals full .spec.training.elasticJobs[0].maxReplicas 8
check "elastic jobs get minReplicas 1" equals full .spec.training.elasticJobs[0].minReplicas 1
check "elastic jobs get remainingSeconds 3600" equals full .spec.training.elasticJobs[1].remainingSeconds 3600
check "elastic jobs get gpusPerWorker 1" equals full .spec.training.elasticJobs[1].gpusPerWorker 1
check "elastic jobs get the core group" equals full .spec.training.elasticJobs[1].group ''

refused "no requiredServers" 'spec.inference.requiredServers' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: no-required}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {}
YAML
refused "a negative requiredServers" 'spec.inference.requiredServers' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: negative}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {requiredServers: -1}
YAML
refused "no training pool" 'spec.trainingPool' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: no-training}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  inference: {requiredServers: 1}
YAML
refused "an empty node selector" 'must select something' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: empty-selector}
spec:
  inferencePool: {nodeSelector: {}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {requiredServers: 1}
YAML
refused "an unknown selector operator" 'spec.trainingPool.nodeSelector.matchExpressions[0].operator' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: bad-operator}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  trainingPool: {nodeSelector: {matchExpressions: [{key: pool, operator: Near}]}}
  inference: {requiredServers: 1}
YAML
refused "maxReplicas below minReplicas" 'maxReplicas must be at least minReplicas' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: bad-range}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {requiredServers: 1}
  training: {elasticJobs: [{version: v1, resource: trainingjobs, minReplicas: 4, maxReplicas: 2}]}
YAML
refused "an elastic job without a resource" 'spec.training.elasticJobs[0].resource' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: no-resource}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {requiredServers: 1}
  training: {elasticJobs: [{version: v1}]}
YAML
refused "zero GPUs per worker" 'spec.training.elasticJobs[0].gpusPerWorker' <<'YAML'
apiVersion: phasescale.io/v1alpha1
kind: CapacityLoan
metadata: {name: zero-gpus}
spec:
  inferencePool: {nodeSelector: {matchLabels: {pool: inference}}}
  trainingPool: {nodeSelector: {matchLabels: {pool: training}}}
  inference: {requiredServers: 1}
  training: {elasticJobs: [{version: v1, resource: trainingjobs, gpusPerWorker: 0}]}
YAML

check "status is updated through the status subresource" kubectl patch cl minimal --subresource status --type merge \
  -p '{"status":{"inferenceNodes":4,"loanedCount":2,"loanedNodes":["a","b"],"returnedNodes":[],"loanedGPUs":16,"conditions":[{"type":"Ready","status":"True","reason":"Reconciled","message":"2 of 4 inference nodes loaned","lastTransitionTime":"2026-11-29T12:00:00Z"}],"lastDecisions":[{"time":"2026-11-29T12:00:00Z","action":"Loan","object":"node/a","message":"loaned"}]}}'
check "the status was stored" equals minimal .status.loanedCount 2
kubectl patch cl minimal --type merge -p '{"status":{"loanedCount":99}}' >/dev/null 2>&1 || true
check "a main-resource patch leaves status alone" equals minimal .status.loanedCount 2
check "a status with an unknown decision action is refused" bash -c \
  "! '$PHASESCALE_TESTENV_BIN/kubectl' patch cl minimal --subresource status --type merge -p '{\"status\":{\"lastDecisions\":[{\"action\":\"Explode\"}]}}' 2>&1 | grep -q patched"
check "printer columns show required, inference, loaned and ready" bash -c \
  "'$PHASESCALE_TESTENV_BIN/kubectl' get cl minimal | grep -E '^NAME +REQUIRED +INFERENCE +LOANED +READY +AGE' && '$PHASESCALE_TESTENV_BIN/kubectl' get cl minimal --no-headers | grep -E '^minimal +2 +4 +2 +True '"

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
