#!/usr/bin/env bash
# The runs of bench/programs/recorded/, which bench/savings.sh measures as the sets recorded-*:
# each folder is a set its README lists, each CSV one execution of its own name with a row every
# 2 s, and every set replays (the shipped default model, from 2 cores and 4 GiB) with a report
# that counts all its executions.
# Usage: recorded.sh BUILD_DIR   (from the project root)
set -uo pipefail
build=$1
source tests/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
recorded=bench/programs/recorded

# One execution per file, named as the file, its rows 2 s apart (within the recorder's jitter).
one_execution_2s_apart() {
  awk -F, -v want="$(basename "$1" .csv)" '
    NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "pod.id") id = i; if ($i == "timestamp") t = i }; next }
    $id != want { bad = 1 }
    NR > 2 && ($t - last < 1.5 || $t - last > 2.5) { bad = 1 }
    { last = $t; rows++ }
    END { exit !(id && t && rows >= 2 && !bad) }' "$1"
}

sets=0
for dir in "$recorded"/*/; do
  set_name=$(basename "$dir")
  sets=$((sets + 1))
  files=$(ls "$dir"*.csv | paste -sd, -)
  count=$(ls "$dir"*.csv | wc -l)
  check "set $set_name: listed in the README" grep -q "^| \`$set_name/\` | $count |" "$recorded/README.md"
  for file in "$dir"*.csv; do
    check "set $set_name: $(basename "$file") is one execution of its name, a row every 2 s" \
      one_execution_2s_apart "$file"
  done
  "$build/cli/phasescale" simulate --trace "$files" --model default --policy phase,vpa \
    --static-cpu 2 --static-memory 4Gi --json "$work/$set_name.json" > /dev/null 2> "$work/err"
  check "set $set_name: replayed" test -s "$work/$set_name.json"
  check "set $set_name: every execution scored" \
    jqt --argjson n "$count" '.policies.phase.jobs == $n and .policies.vpa.jobs == $n' "$work/$set_name.json"
done
check "twelve sets" test "$sets" = 12

summary "bench/programs/recorded"
