#!/usr/bin/env bash
# Aryl against the baseline (docs/capacity-loans.md, bench/cluster/README.md): a 15-day window of the Philly
# trace (cluster 6214e9) and a generated 15-day trace, each with a generated diurnal inference
# load. Run from anywhere after scripts/build.sh (PHASESCALE_BUILD_DIR=other-build to use
# another build); writes out/cluster/*.json and *.html and prints the tables.
#
# Sizing: the training pool holds the jobs' average offered load (sum of base GPUs x duration over
# the 15 days) at 90% utilisation, rounded up to whole servers, so that the baseline queues when
# submissions bunch up, as the paper's clusters did; the inference pool has as many servers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
out=out/cluster
gpus=8
utilisation=0.9
mkdir -p "$out"

# One generated trace and load (seed 1): the load also serves the Philly window.
"$phasescale" cluster-gen --seed 1 --days 15 --jobs-out "$out/generated-jobs.csv" --load-out "$out/load.csv"

philly=(--jobs ../shared/data/philly/philly-jobs.csv --cluster 6214e9 --from 2017-10-01 --days 15 --seed 1)
generated=(--jobs "$out/generated-jobs.csv")
curves=../shared/data/philly  # the measured scaling curves

offered() {  # the trace's offered load in GPUs, from a baseline run on an ample cluster
  "$phasescale" cluster-sim "$@" --inference-load "$out/load.csv" --curves "$curves" --policy baseline \
    --training-servers 100000 --inference-servers 0 --json "$out/offered.json" >/dev/null
  sed -n 's/.*"offered_gpus": *\([0-9.e+-]*\).*/\1/p' "$out/offered.json"
}

run() {  # name, then the job arguments
  local name=$1; shift
  local load servers
  load=$(offered "$@")
  servers=$(awk -v l="$load" -v g="$gpus" -v u="$utilisation" 'BEGIN { s = l / (g * u); n = int(s); if (n < s) n++; print n }')
  echo "== $name: offered load $load GPUs -> $servers training + $servers inference servers of $gpus GPUs"
  "$phasescale" cluster-sim "$@" --inference-load "$out/load.csv" --curves "$curves" --training-servers "$servers" \
    --inference-servers "$servers" --gpus-per-server "$gpus" --json "$out/$name.json" --html "$out/$name.html"
  awk -v f="$out/$name.json" 'BEGIN {
    while ((getline line < f) > 0) {
      if (line ~ /"(baseline|loan|elastic|aryl)": \{/) { match(line, /"[a-z]+"/); p = substr(line, RSTART + 1, RLENGTH - 2) }
      if (line ~ /"versus_baseline"/) p = "";
      if (p != "" && line ~ /"(avg_queue_s|avg_jct_s|gpu_usage)":/) {
        split(line, kv, ":"); gsub(/[ ",]/, "", kv[1]); gsub(/[ ,]/, "", kv[2]); v[p, kv[1]] = kv[2]
      }
    }
    b = "baseline";
    printf "aryl vs baseline: avg queue %.2fx lower, avg JCT %.2fx lower, GPU usage %+.1f%% (paper: 1.53x, 1.50x, up to +26.9%%)\n",
      v[b, "avg_queue_s"] / v["aryl", "avg_queue_s"], v[b, "avg_jct_s"] / v["aryl", "avg_jct_s"],
      100 * (v["aryl", "gpu_usage"] / v[b, "gpu_usage"] - 1)
  }'
  echo
}

run philly-6214e9 "${philly[@]}"
run generated "${generated[@]}"
rm -f "$out/offered.json"
