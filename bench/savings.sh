#!/usr/bin/env bash
# The savings measurements of the README: held-out executions only, every policy calibrated to
# 95% fulfilment on the training executions. Run from anywhere after scripts/build.sh; writes
# out/savings/*.json and *.html and prints one table per experiment.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
ai4dl=../shared/data/ai4dl
out=out/savings
mkdir -p "$out"

run() {  # name, then simulate's arguments
  local name=$1; shift
  echo "== $name"
  "$phasescale" simulate "$@" --target-fulfilment 0.95 --json "$out/$name.json" --html "$out/$name.html"
  echo
}

# Generated jobs (seed 11, never the default model's seed 1000). 5 folds: each fold trains a
# model on 80 jobs and scores the other 20.
"$phasescale" generate --jobs 100 --seed 11 --out "$out/generated.csv"
run generated-folds --trace "$out/generated.csv" --folds 5 --phases 8 --epochs 50
# The same jobs with the built-in default model (trained on other generated jobs), calibrated on
# each fold's training jobs.
run generated-default-model --trace "$out/generated.csv" --model default --folds 5

# AI4DL sample.csv: 4 executions, each held out once; the model trains on the other 3.
run ai4dl-sample-folds --trace "$ai4dl/sample.csv" --folds 4 --phases 5 --epochs 50
# AI4DL sample-vr.csv has one execution, so no split is possible within it: both files together,
# 5 folds (sample-vr's execution is scored by a model trained on sample.csv's four).
run ai4dl-both-folds --trace "$ai4dl/sample.csv,$ai4dl/sample-vr.csv" --folds 5 --phases 5 --epochs 50
