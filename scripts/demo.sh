#!/usr/bin/env bash
# Builds phasescale, trains a phase model on the bundled AI4DL trace, prints the phase timeline
# of each execution and what the model learnt about each phase. Outputs go to out/demo/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/build.sh
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
trace=../shared/data/ai4dl/sample.csv
mkdir -p out/demo

"$phasescale" train --trace "$trace" --out out/demo/sample.model.json
echo
"$phasescale" predict --model out/demo/sample.model.json --trace "$trace" \
  --out out/demo/sample.phases.csv --timeline
echo
"$phasescale" inspect out/demo/sample.model.json
