#!/usr/bin/env bash
# The savings demo: builds phasescale, generates traces of 60 training jobs, replays them through
# every provisioning policy with the built-in default model (which never saw these jobs),
# calibrated to 95% fulfilment, prints the summary table and writes the HTML report.
# Outputs go to out/demo/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/build.sh
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
mkdir -p out/demo

"$phasescale" generate --jobs 60 --seed 7 --out out/demo/jobs.csv
"$phasescale" predict --model default --trace out/demo/jobs.csv --out out/demo/phases.csv \
  --timeline > out/demo/timeline.txt
echo "the phases of the first jobs, one character per sample (all of them: out/demo/timeline.txt)"
head -n 6 out/demo/timeline.txt | cut -c1-150
echo
"$phasescale" simulate --model default --trace out/demo/jobs.csv \
  --json out/demo/report.json --html out/demo/report.html
echo
echo "report: out/demo/report.html (open it in a browser); JSON: out/demo/report.json"
