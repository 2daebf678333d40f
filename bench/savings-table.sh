#!/usr/bin/env bash
# The savings table of docs/savings.md from bench/savings.sh's reports: `phase` (the operator's policy)
# against the VPA (its target under phasescale's resize rules, and as deployed: `vpa-updater`), a recent window, KRR, itself without the model (the ablation) and `perfect`,
# with the risk each took.
# Usage: bash bench/savings-table.sh [DIR [SET]]   (default out/savings, every set in it; SET:
# that set and its variants, SET-*)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${1:-out/savings}
only=${2:-}

echo "| set | run | resource | phase vs vpa | vs vpa-updater | vs window | vs krr | vs phase-no-model | perfect vs vpa | share of perfect | CPU fulfilment phase / vpa | OOM kills phase / vpa / vpa-updater / window / krr | jobs killed phase / vpa / vpa-updater | resizes per pod-hour phase / vpa / vpa-updater |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for report in "$dir"/*.json; do
  name=$(basename "$report" .json)
  set_name=${name%.defaults}
  [[ -z $only || $set_name == "$only" || $set_name == "$only"-* ]] || continue
  run=$([[ $name == *.defaults ]] && echo "defaults" || echo "equal risk")
  jq -r --arg set "$set_name" --arg run "$run" '
    def pct: if . == null then "-" else (. * 1000 | round / 10 | tostring) + "%" end;
    def red(p; b; r): if .policies[p] and .policies[b] then (1 - .policies[p][r].allocated / .policies[b][r].allocated) else null end;
    . as $j
    | ["cpu", "memory"][] as $r
    | (red("phase"; "vpa"; $r)) as $pv
    | (red("perfect"; "vpa"; $r)) as $perf
    | [ $set, $run, $r, ($pv | pct), (red("phase"; "vpa-updater"; $r) | pct), (red("phase"; "window"; $r) | pct), (red("phase"; "krr"; $r) | pct), (red("phase"; "phase-no-model"; $r) | pct),
        ($perf | pct),
        (if $perf != null and $perf > 0 then ($pv / $perf * 100 | round / 100 | tostring) else "-" end),
        (if $r == "cpu" then ((.policies.phase.cpu.fulfilment | pct) + " / " + (.policies.vpa.cpu.fulfilment | pct)) else "" end),
        (if $r == "memory" then ([.policies.phase, .policies.vpa, .policies["vpa-updater"], .policies.window, .policies.krr] | map(.memory.oom_kills | tostring) | join(" / ")) else "" end),
        (if $r == "memory" then ([.policies.phase, .policies.vpa, .policies["vpa-updater"]] | map(.memory.jobs_oom_killed_share | pct) | join(" / ")) else "" end),
        (if $r == "cpu" then ([.policies.phase, .policies.vpa, .policies["vpa-updater"]] | map(.resizes_per_pod_hour * 10 | round / 10 | tostring) | join(" / ")) else "" end)
      ]
    | "| " + join(" | ") + " |"' "$report"
done
