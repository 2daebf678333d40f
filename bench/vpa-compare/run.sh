#!/usr/bin/env bash
# The cost of phasescale beside the real VPA at scale (issue 15; tests/vpa-compare/README.md):
#
#   bash bench/vpa-compare/run.sh [PODS]        # PODS in all, half per namespace; default 500
#
# Runs tests/vpa-compare/run.sh with PODS/2 pods in each of its two namespaces (one under the
# VPA, one under phasescale), RECORD (default 300) seconds recorded, and prints its table: the
# VPA recommender's loop time (vpa_recommender_execution_latency_seconds{step="total"}) and RSS
# beside phasescale-operator's tick time (phasescale_tick_seconds) and RSS, API requests per
# minute of each (the kube-apiserver's audit log by user agent), and the outcomes of both.
# Results in OUT (default BUILD/vpa-compare-PODS). Environment: BUILD (build directory, default
# build-scale, as bench/scale), and every setting of tests/vpa-compare/run.sh (SPEED, LOOP,
# SCRAPE, START_CPU, START_MEM, VPA_MODE, TORCH, SEED, KEEP).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
total=${1:-500}
build=${BUILD:-$root/build-scale}
[[ $build = /* ]] || build=$root/$build
out=${OUT:-$build/vpa-compare-$total}
cli=$build/cli/phasescale operator=$build/operator/phasescale-operator
replay=$build/tools/replay-exporter/phasescale-replay-exporter
for b in "$cli" "$operator" "$replay"; do
    [[ -x $b ]] || { echo "missing $b (ninja -C $build phasescale phasescale-operator phasescale-replay-exporter)" >&2; exit 2; }
done
PODS=$((total / 2)) RECORD=${RECORD:-300} TORCH=${TORCH:-6} \
    exec "$root/tests/vpa-compare/run.sh" "$cli" "$operator" "$replay" "$out"
