#!/usr/bin/env bash
# Where each policy's memory goes over a container's life: its memory requests (GiB-hours, as the
# reports' memory.allocated integrates them) by the container's age, from `simulate
# --allocations`; and, in a second table, how much of them the policy no longer asked for (the
# requests in force above those it last asked for: cuts the cooldown, minChange or the actuation
# delay held back). docs/savings.md reads it: most of what `phase` holds above the VPA's target on
# short runs is their first minute, which it holds for start-ups, and much of it is held back by
# the cooldown.
# Usage: bash bench/memory-by-age.sh TRACES [SIMULATE_ARGS...]
#   TRACES: a directory (its *.csv) or FILE[,FILE...]; SIMULATE_ARGS replace the default
#   "--model default --folds N --static-cpu 2 --static-memory 4Gi --policy phase,vpa,perfect",
#   N the number of executions up to 5 (the shipped defaults, held out, as bench/savings.sh replays
#   the recorded sets; add --tick 15s for the operator's tick).
# AGES: the bounds of the age buckets, seconds, ascending (default "30 60 120").
# MEMORY_BY_AGE_OUT: where simulate's report and allocations go (default out/memory-by-age).
# Run after scripts/build.sh (PHASESCALE_BUILD_DIR: its build directory, default build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/runs-list.sh
phasescale=${PHASESCALE_BUILD_DIR:-build}/cli/phasescale
out=${MEMORY_BY_AGE_OUT:-out/memory-by-age}
ages=${AGES:-30 60 120}

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi
if [[ $# -lt 1 ]]; then
  usage >&2
  exit 2
fi
traces=$(runs_list "$1")
if [[ -z $traces ]]; then
  echo "memory-by-age.sh: $1 names no trace CSV" >&2
  exit 2
fi
shift
if ! awk -v ages="$ages" 'BEGIN { n = split(ages, a, " "); if (n < 1) exit 1
       for (i = 1; i <= n; i++) if (a[i] !~ /^[0-9]+(\.[0-9]+)?$/ || (i > 1 && a[i] + 0 <= a[i-1] + 0)) exit 1 }'; then
  echo "memory-by-age.sh: AGES=\"$ages\" must be ascending seconds" >&2
  exit 2
fi
count=$(executions "$traces")
[[ $# -gt 0 ]] || set -- --model default --folds $((count < 5 ? count : 5)) --static-cpu 2 \
  --static-memory 4Gi --policy phase,vpa,perfect

mkdir -p "$out"
"$phasescale" simulate --trace "$traces" "$@" --json "$out/report.json" \
  --allocations "$out/allocations.csv" > /dev/null

# Each sample's request counts for the time to the next sample of its container (the last sample
# for the interval before it), as the replay scores it; its age is its time since the
# container's first sample.
awk -F, -v ages="$ages" '
  function add(policy, age, d,   b) {
    for (b = 1; b <= n && age >= edge[b]; b++) {}
    sum[policy, b] += p_mem * d / 3600
    held[policy, b] += p_held * d / 3600
    if (!(policy in seen)) { seen[policy] = 1; order[++policies] = policy }
  }
  function flush() {
    if (key != "") add(p_policy, p_t - first, prev_d)
  }
  function table(title, value, suffix,   i, b, policy, total, line, header, rule) {
    header = "| " title
    for (b = 1; b <= n + 1; b++)
      header = header " | " (b == 1 ? 0 : edge[b-1]) (b <= n ? "-" edge[b] " s" : " s on")
    print header " | total |"
    rule = "| ---"; for (b = 1; b <= n + 2; b++) rule = rule " | ---"; print rule " |"
    for (i = 1; i <= policies; i++) {
      policy = order[i]; total = 0
      for (b = 1; b <= n + 1; b++) total += value[policy, b]
      line = "| " policy suffix
      for (b = 1; b <= n + 1; b++) line = line sprintf(" | %.3f", value[policy, b])
      printf "%s | %.3f |\n", line, total
    }
  }
  BEGIN { n = split(ages, edge, " ") }
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  {
    k = $col["policy"] SUBSEP $col["source"] SUBSEP $col["id"]
    t = $col["timestamp"] + 0
    if (k != key) { flush(); key = k; first = t; prev_d = 0 }
    else { prev_d = t - p_t; add(p_policy, p_t - first, prev_d) }
    p_policy = $col["policy"]; p_t = t; p_mem = $col["memory_request"] / 1073741824
    p_held = ($col["memory_request"] - $col["memory_asked"]) / 1073741824
    if (p_held < 0) p_held = 0
  }
  END {
    flush()
    table("policy", sum, "")
    print ""
    table("held back", held, " (held)")
  }' "$out/allocations.csv"
echo "GiB-hours of memory requests by container age, and of those above what the policy last asked"
echo "for (held back); report: $out/report.json"
