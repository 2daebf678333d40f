#!/usr/bin/env bash
# Records the training programs of this folder (shapes the train.py of
# ../shared/tools/torch-traces/ does not have) under that folder's recorder, one at a time, about
# 3.5 minutes each (46 minutes in all), into OUTDIR: runs of other programs to judge the policy
# on, as in docs/savings.md. Usage: bash bench/programs/record.sh OUTDIR (from the project root).
# Needs Debian's python3-torch, python3-numpy and libopenblas0-openmp (apt-get install).
set -euo pipefail
out="${1:?usage: record.sh OUTDIR}"
here="$(cd "$(dirname "$0")" && pwd)"
recorder="$here/../../../shared/tools/torch-traces/recorder.py"
mkdir -p "$out/extra"
for run in o01-lazyadam o02-replay o03-stages o04-gan o05-finetune o06-workers o07-bursty \
  o08-cache o09-ckpt o10-sweep o11-ddp o12-prep o13-upload; do
  /usr/bin/python3 "$recorder" --out "$out/$run.csv" --pod "$run" --service torch-dev \
    --interval 2.0 --extra "$out/extra/$run.diag.csv" --log "$out/extra/$run.log" -- \
    /usr/bin/python3 "$here/${run#*-}.py"
done
