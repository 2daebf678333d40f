#!/usr/bin/env bash
# The offline part (model/, policy/, sim/ and the phasescale commands that need no server) builds
# and works without cpprestsdk: configures build-offline/ (PHASESCALE_OFFLINE_BUILD_DIR) with
# cpprestsdk hidden from CMake, builds the `phasescale` target only (no tests, no benchmarks),
# then checks that it links no cpprest (and model/, policy/, sim/ include none), that `predict`
# still gives the AI4DL golden phases, that `simulate --autoscaler` reads a PhaseAutoscaler, and
# that the Prometheus options say this build has none and fail with exit code 2. About 2-4 minutes on 2 cores. Needs the packages of
# scripts/install-deps.sh (run scripts/build.sh first) and ../shared/data beside the project.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${PHASESCALE_OFFLINE_BUILD_DIR:-build-offline}
data=../shared/data
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_cpprestsdk=ON \
  -DPHASESCALE_BUILD_TESTS=OFF -DPHASESCALE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" --target phasescale ${PHASESCALE_JOBS:+--parallel "$PHASESCALE_JOBS"}
cli=$build_dir/cli/phasescale
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "offline-check: $*" >&2; exit 1; }

if ldd "$cli" | grep -Eq 'cpprest|libssl|libcrypto'; then fail "$cli links cpprest or OpenSSL"; fi
# cpprest's headers are on the system include path, so only this notices one included below the
# operator (the operator's own headers are not on model/, policy/ or sim/'s include path).
if grep -rEn '#include *[<"](cpprest|pplx|boost|openssl)/' model policy sim; then
  fail "model/, policy/ or sim/ includes cpprest, Boost or OpenSSL"
fi
if [[ -e $build_dir/operator/phasescale-operator ]]; then fail "the operator was built without cpprest"; fi

# The model: the AI4DL golden phases, byte for byte.
"$cli" predict --model "$data/ai4dl/ai4dl-pretrained.model.json" --trace "$data/ai4dl/sample.csv" --out "$tmp/phases.csv"
cmp -s "$tmp/phases.csv" "$data/ai4dl/sample.golden.csv" || fail "predict differs from sample.golden.csv"

# policy/, sim/ and the operator's spec parsing (control_core, kube_core, yaml-cpp).
cat >"$tmp/pas.yaml" <<'EOF'
apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: trainers, namespace: ml}
spec:
  selector: {matchLabels: {app: trainer}}
  cooldownSeconds: 0
EOF
"$cli" simulate --trace "$data/torch/dev03-gru.csv" --policy phase --static-cpu 2 --static-memory 4Gi \
  --autoscaler "$tmp/pas.yaml" --json "$tmp/sim.json" >/dev/null
grep -q '"cooldown_seconds": 0' "$tmp/sim.json" || fail "simulate --autoscaler did not apply cooldownSeconds: 0"

# What needs a server says so, in the help and when used.
"$cli" export-trace --help | grep -q 'not in this build' || fail "export-trace --help does not say it has no Prometheus"
set +e
"$cli" train --prometheus http://127.0.0.1:9 --namespace ml --out "$tmp/m.json" 2>"$tmp/err"
code=$?
set -e
[[ $code == 2 ]] || fail "train --prometheus exited $code, not 2"
grep -q 'built without cpprestsdk' "$tmp/err" || fail "train --prometheus: $(cat "$tmp/err")"
set +e
"$cli" recommend --prometheus http://127.0.0.1:9 --namespace ml 2>"$tmp/err"
code=$?
set -e
[[ $code == 2 ]] || fail "recommend exited $code, not 2"
grep -q 'built without cpprestsdk' "$tmp/err" || fail "recommend: $(cat "$tmp/err")"
echo "offline-check: phasescale without cpprestsdk builds; predict, simulate --autoscaler and the no-Prometheus messages are right"
