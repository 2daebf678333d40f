#!/usr/bin/env bash
# How often a pod's phasescale.io/phase label changes with the default model, by the operator's
# --phase-label-hold (docs/model.md, "The phase label"): 50 generated jobs (seed 7, which the
# default model never saw) and the AI4DL traces, replayed through the operator's tracker at a
# 15 s tick. Run from anywhere after scripts/build.sh; prints Markdown tables.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${PHASESCALE_BUILD_DIR:-build}
out=out/label-hold
mkdir -p "$out"
"$build/cli/phasescale" generate --jobs 50 --seed 7 --out "$out/generated.csv" >/dev/null
holds=(0 30 60 120 180 300 600)
echo "generated jobs:"
"$build/bench/label_hold" "$out/generated.csv" 15 "${holds[@]}"
echo "AI4DL traces:"
"$build/bench/label_hold" ../shared/data/ai4dl/sample.csv,../shared/data/ai4dl/sample-vr.csv 15 "${holds[@]}"
