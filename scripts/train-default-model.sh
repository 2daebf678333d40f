#!/usr/bin/env bash
# Rebuilds the built-in default model, model/pretrained/default.model.json, from all the real
# training traces the project has (the six PyTorch runs of ../shared/data/torch and the AI4DL
# traces of ../shared/data/ai4dl) plus 200 generated training jobs (seed 1000, never used by the
# demo or the measurements): the canonical usage features, 8 phases. Deterministic: the same
# build and data give the same parameters. How a model trained this way does on executions it
# never saw is measured by bench/savings.sh (torch-folds-default-recipe) and bench/phases.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/build.sh
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
mkdir -p out/default-model
"$phasescale" generate --jobs 200 --seed 1000 --out out/default-model/generated.csv
real=$(ls ../shared/data/torch/dev*.csv ../shared/data/ai4dl/sample.csv ../shared/data/ai4dl/sample-vr.csv | paste -sd, -)
"$phasescale" train --trace "out/default-model/generated.csv,$real" \
  --features cpu.usage.cores,mem.working.set \
  --hidden 10 --history 3 --phases 8 --epochs 50 --seed 1 --out model/pretrained/default.model.json
echo "rebuild phasescale to compile the new model in"
