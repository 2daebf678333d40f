#!/usr/bin/env bash
# How well the inferred phases agree with the phases the training programs logged, on the six
# real PyTorch runs (../shared/data/torch), each predicted by a model that never saw it: trained on
# the other five runs, and trained by the built-in default model's recipe (scripts/
# train-default-model.sh: 200 generated jobs, the AI4DL traces and the other five runs, 8 phases;
# the shipped model itself has seen all six); then on the runs of train.py kept in
# bench/programs/recorded/ (those with a phase log), each predicted by the shipped default model,
# which never saw them. Run from anywhere after scripts/build.sh; writes out/phases/ (models,
# predict's reports) and prints two Markdown tables.
# PHASES and SEED set the leave-one-out models' phases and seed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
torch=../shared/data/torch
out=out/phases
phases=${PHASES:-6}
seed=${SEED:-7}
runs=(dev01-mlp dev02-cnn dev03-gru dev04-transformer dev05-ae dev06-lstm)
mkdir -p "$out"
ai4dl=../shared/data/ai4dl
"$phasescale" generate --jobs 200 --seed 1000 --out "$out/generated.csv" >/dev/null

others() {  # the traces of every run but $1, comma-separated
  local run list=()
  for run in "${runs[@]}"; do [[ $run == "$1" ]] || list+=("$torch/$run.csv"); done
  (IFS=,; echo "${list[*]}")
}

agreement() {  # model, run's trace, its phase log, report file: "AMI inferred/h true/h" of the run
  "$phasescale" predict --model "$1" --trace "$2" --true-phases "$3" >"$4"
  awk -v run="$(basename "$2" .csv)" '$1 == run { print $4, $5, $6 }' "$4"
}
torch_agreement() {  # model, torch run, report file
  agreement "$1" "$torch/$2.csv" "$torch/extra/$2.phases.csv" "$3"
}

echo "| run | true changes/h | AMI raw, leave-one-out | inferred changes/h, leave-one-out | AMI raw, default recipe | inferred changes/h, default recipe |"
echo "|---|---:|---:|---:|---:|---:|"
sum_loo=0 sum_default=0
for run in "${runs[@]}"; do
  model=$out/loo-$run.model.json
  "$phasescale" train --trace "$(others "$run")" --phases "$phases" --seed "$seed" \
    --out "$model" >"$out/loo-$run.train.txt"
  read -r ami_loo inferred_loo true_h < <(torch_agreement "$model" "$run" "$out/loo-$run.txt")
  recipe=$out/recipe-$run.model.json
  "$phasescale" train --trace "$out/generated.csv,$ai4dl/sample.csv,$ai4dl/sample-vr.csv,$(others "$run")" \
    --features cpu.usage.cores,mem.working.set --hidden 10 --history 3 --phases 8 --epochs 50 \
    --seed 1 --out "$recipe" >"$out/recipe-$run.train.txt"
  read -r ami_default inferred_default _ < <(torch_agreement "$recipe" "$run" "$out/recipe-$run.txt")
  echo "| $run | $true_h | $ami_loo | $inferred_loo | $ami_default | $inferred_default |"
  sum_loo=$(awk -v s="$sum_loo" -v a="$ami_loo" 'BEGIN { print s + a }')
  sum_default=$(awk -v s="$sum_default" -v a="$ami_default" 'BEGIN { print s + a }')
done
awk -v l="$sum_loo" -v d="$sum_default" -v n="${#runs[@]}" \
  'BEGIN { printf "| mean | | %.3f | | %.3f | |\n", l / n, d / n }'

# The recorded train.py runs, by the shipped default model.
echo
echo "| recorded run | true changes/h | AMI raw, shipped default model | inferred changes/h |"
echo "|---|---:|---:|---:|"
sum=0 n=0
for log in bench/programs/recorded/*/extra/*.phases.csv; do
  run=$(basename "$log" .phases.csv)
  read -r ami inferred true_h < <(agreement default "$(dirname "$log")/../$run.csv" "$log" \
    "$out/recorded-$run.txt")
  echo "| $run | $true_h | $ami | $inferred |"
  sum=$(awk -v s="$sum" -v a="$ami" 'BEGIN { print s + a }')
  n=$((n + 1))
done
awk -v s="$sum" -v n="$n" 'BEGIN { printf "| mean of %d | | %.3f | |\n", n, s / n }'
