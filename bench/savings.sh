#!/usr/bin/env bash
# The savings measurements of docs/savings.md, on held-out executions only (never seen by the model
# they are scored with), twice per set:
#   NAME.defaults.*  the shipped defaults: every policy as a user runs it (`phase` as a
#                    PhaseAutoscaler with the CRD's defaults), no calibration;
#   NAME.*           equal risk: every policy's margins calibrated on the training executions:
#                    phase's to 95% CPU fulfilment and no more OOM kills than the VPA there
#                    (each replayed with a model that never saw it: simulate --inner-folds), the
#                    others' to the risk phase reached (less, when its margins stop at 0).
# Run from anywhere after scripts/build.sh; writes out/savings/*.json and *.html, prints one table
# per run and a summary (bench/savings-table.sh) at the end. The sets: the torch runs of
# ../shared/data/torch, the AI4DL traces, generated jobs, and the runs of other programs kept in
# bench/programs/recorded/ (recorded-<set>), about 7 minutes in all on 2 cores.
#
# Your own runs: RUNS=FILE[,FILE...] or RUNS=DIR (its *.csv), trace CSVs of other programs (for
# example recorded with ../shared/tools/torch-traces/record.sh, or written by
# `phasescale export-trace`), are measured too, as the set `runs`: replayed with the shipped
# default model, which never saw them, from the requests in RUNS_STATIC (default
# "--static-cpu 2 --static-memory 4Gi", for runs recorded without requests; empty: the trace's
# allocation columns); at equal risk, calibrated on the other executions (up to 5 folds; needs
# 2 executions, by their pod.id).
# They are measured again as the operator observes them at its default --tick of 15 s, as the set
# `runs-tick-15s` (below).
# RUNS_ONLY=1 measures only them. Each call replaces the `runs` reports of an earlier one.
# SAVINGS_OUT: where the reports go (default out/savings).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
ai4dl=../shared/data/ai4dl
torch=../shared/data/torch
out=${SAVINGS_OUT:-out/savings}
mkdir -p "$out"

defaults() {  # name, then simulate's arguments: the shipped defaults only
  local name=$1; shift
  echo "== $name, shipped defaults"
  "$phasescale" simulate "$@" --json "$out/$name.defaults.json" --html "$out/$name.defaults.html"
}

run() {  # name, then simulate's arguments: the defaults, then equal risk
  local name=$1; shift
  defaults "$name" "$@"
  echo "== $name, equal risk"
  "$phasescale" simulate "$@" --target-fulfilment 0.95 --json "$out/$name.json" --html "$out/$name.html"
  echo
}

source bench/runs-list.sh

# A set of runs of other programs (NAME, its files comma-separated, then the requests they start
# from), replayed with the shipped default model, which never saw them: at every sample as NAME
# and at the operator's tick as NAME-tick-15s; at equal risk calibrated on the other executions
# (up to 5 folds), where there are at least 2.
runs_set() {
  local name=$1 files=$2 tick n
  shift 2
  n=$(executions "$files")
  for tick in "" 15s; do
    if ((n >= 2)); then
      run "$name${tick:+-tick-$tick}" --trace "$files" --model default --folds $((n < 5 ? n : 5)) "$@" ${tick:+--tick $tick}
    else
      echo "(a single execution: nothing to calibrate on, no equal-risk run)"
      defaults "$name${tick:+-tick-$tick}" --trace "$files" --model default "$@" ${tick:+--tick $tick}
    fi
  done
}

rm -f "$out"/runs.* "$out"/runs-tick-15s.*  # the runs of an earlier call never mix into this table
if [[ -n ${RUNS:-} ]]; then
  runs=$(runs_list "$RUNS")
  if [[ -z $runs ]]; then
    echo "savings.sh: RUNS=$RUNS names no trace CSV" >&2
    exit 2
  fi
  read -r -a static <<<"${RUNS_STATIC-"--static-cpu 2 --static-memory 4Gi"}"
  runs_set runs "$runs" "${static[@]}"
  if [[ ${RUNS_ONLY:-0} == 1 ]]; then
    bash bench/savings-table.sh "$out" runs
    exit 0
  fi
fi

# Real PyTorch training runs: six programs, each held out once (the model trains on the other
# five). They ran without requests or limits: every policy starts from 2 cores and 4 GiB, what a
# user would give such a job on the 2-core machine they were recorded on.
torch_runs=$(ls "$torch"/dev*.csv | paste -sd, -)
run torch-folds --trace "$torch_runs" --folds 6 --phases 6 --epochs 50 --static-cpu 2 --static-memory 4Gi
# The same, as the operator sees them at its defaults (--tick 15s, CPU and throttling over the
# latest 15 s scrape): every policy observes and decides once per tick (memory at the tick), and
# every 2 s sample is scored (memory over the limit between two ticks kills).
run torch-folds-tick-15s --trace "$torch_runs" --folds 6 --phases 6 --epochs 50 \
  --static-cpu 2 --static-memory 4Gi --tick 15s
# The same runs scored by the shipped default model's recipe (scripts/train-default-model.sh)
# without the held-out run: every fold's model also trains on the 200 generated jobs and the
# AI4DL traces, 8 phases. The shipped model itself has seen all six runs.
"$phasescale" generate --jobs 200 --seed 1000 --out "$out/default-recipe-generated.csv"
run torch-folds-default-recipe --trace "$torch_runs" --folds 6 --phases 8 --epochs 50 \
  --train-also "$out/default-recipe-generated.csv,$ai4dl/sample.csv,$ai4dl/sample-vr.csv" \
  --static-cpu 2 --static-memory 4Gi

# AI4DL sample.csv: 4 executions, each held out once; the model trains on the other 3.
run ai4dl-sample-folds --trace "$ai4dl/sample.csv" --folds 4 --phases 5 --epochs 50
# The same at the operator's tick (its samples are 10-30 s apart: CPU over a 60 s window).
run ai4dl-sample-folds-tick-15s --trace "$ai4dl/sample.csv" --folds 4 --phases 5 --epochs 50 \
  --tick 15s
# AI4DL sample-vr.csv has one execution, so no split is possible within it: both files together,
# 5 folds (sample-vr's execution is scored by a model trained on sample.csv's four).
run ai4dl-both-folds --trace "$ai4dl/sample.csv,$ai4dl/sample-vr.csv" --folds 5 --phases 5 --epochs 50

# Generated jobs (seed 11, never the default model's seed 1000). 5 folds: each fold trains a
# model on 80 jobs and scores the other 20.
"$phasescale" generate --jobs 100 --seed 11 --out "$out/generated.csv"
run generated-folds --trace "$out/generated.csv" --folds 5 --phases 8 --epochs 50
# The same jobs with the built-in default model (trained on other generated jobs).
run generated-default-model --trace "$out/generated.csv" --model default --folds 5
# And at the operator's tick (their samples are 12-17 s apart: CPU over a 60 s window).
run generated-default-model-tick-15s --trace "$out/generated.csv" --model default --folds 5 \
  --tick 15s

# Runs of other programs recorded by bench/programs/ (bench/programs/recorded/README.md), each
# folder a set: recorded without requests, so every policy starts from 2 cores and 4 GiB, as on
# the torch runs.
for dir in bench/programs/recorded/*/; do
  set_name=$(basename "$dir")
  runs_set "recorded-$set_name" "$(runs_list "${dir%/}")" --static-cpu 2 --static-memory 4Gi
done

bash bench/savings-table.sh "$out"
