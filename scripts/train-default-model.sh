#!/usr/bin/env bash
# Rebuilds the built-in default model, model/pretrained/default.model.json: 200 generated
# training jobs (seed 1000, never used by the demo or the measurements), the canonical usage
# features, 8 phases. Deterministic: the same build gives the same parameters.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/build.sh
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
mkdir -p out/default-model
"$phasescale" generate --jobs 200 --seed 1000 --out out/default-model/train.csv
"$phasescale" train --trace out/default-model/train.csv --features cpu.usage.cores,mem.working.set \
  --hidden 10 --history 3 --phases 8 --epochs 50 --seed 1 --out model/pretrained/default.model.json
echo "rebuild phasescale to compile the new model in"
