#!/usr/bin/env bash
# bench/memory-by-age.sh: each policy's memory requests by container age add up, bucket by
# bucket, to the memory.allocated of simulate's report, and what it held back above what it asked
# for is a part of them, none without a cooldown or minChange; AGES sets the buckets; bad input is
# refused with a reason. Runs of bench/programs/recorded/ stand in for a user's.
# Usage: memory-by-age.sh BUILD_DIR   (from the project root)
set -uo pipefail
build=$1
source tests/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
by_age() { PHASESCALE_BUILD_DIR=$build MEMORY_BY_AGE_OUT=$work/out bash bench/memory-by-age.sh "$@"; }
args=(--model default --folds 2 --static-cpu 2 --static-memory 4Gi --policy phase,vpa)
row() { grep "^| $1 |" "$work/table"; }
# The report's memory.allocated of a policy, in GiB-hours to 3 decimals, as the table prints it.
reported() { jq -r --arg p "$1" '.policies[$p].memory.allocated / 1073741824 / 3600 * 1000 | round / 1000' "$work/out/report.json"; }
# The last column (total) and the sum of the others, of a policy's row.
total() { row "$1" | awk -F'|' '{ printf "%.3f", $(NF - 1) + 0 }'; }
sum_of_ages() { row "$1" | awk -F'|' '{ for (i = 3; i < NF - 1; i++) s += $i; printf "%.3f", s }'; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a - b <= 0.0025 && b - a <= 0.0025) }'; }

by_age bench/programs/recorded/w "${args[@]}" > "$work/table" 2> "$work/err"
check "a row per policy asked for" test -n "$(row phase)" -a -n "$(row vpa)"
check "four age buckets by default" grep -q "^| policy | 0-30 s | 30-60 s | 60-120 s | 120 s on | total |$" "$work/table"
for p in phase vpa; do
  check "$p: its total is the report's memory.allocated" near "$(total $p)" "$(reported $p)"
  check "$p: its buckets add up to its total" near "$(sum_of_ages $p)" "$(total $p)"
done

# The second table: what each policy held back above the requests it last asked for, a row
# "<policy> (held)" that row, total and sum_of_ages read as any other.
check "a row per policy of what it held back" test -n "$(row 'phase (held)')" -a -n "$(row 'vpa (held)')"
check "phase: held back at the defaults (a cut waits for the cooldown)" \
  awk -v h="$(total 'phase (held)')" 'BEGIN { exit !(h > 0) }'
check "... a part of its requests" awk -v h="$(total 'phase (held)')" -v t="$(total phase)" 'BEGIN { exit !(h <= t) }'
check "... its buckets adding up to it" near "$(sum_of_ages 'phase (held)')" "$(total 'phase (held)')"
by_age bench/programs/recorded/w "${args[@]}" --cooldown 0 --min-change 0 > "$work/table" 2> "$work/err"
check "without a cooldown or minChange nothing is held back" test "$(total 'phase (held)')" = 0.000

AGES=60 by_age bench/programs/recorded/w "${args[@]}" > "$work/table" 2> "$work/err"
check "AGES=60: two buckets" grep -q "^| policy | 0-60 s | 60 s on | total |$" "$work/table"
check "... adding up to the same total" near "$(sum_of_ages phase)" "$(reported phase)"

AGES="60 30" by_age bench/programs/recorded/w "${args[@]}" > "$work/table" 2> "$work/err"
check "AGES not ascending is refused" test $? = 2
check "... saying so" grep -q "must be ascending seconds" "$work/err"

mkdir "$work/empty"
by_age "$work/empty" > "$work/table" 2> "$work/err"
check "a directory without trace CSVs is refused" test $? = 2
check "... saying so" grep -q "names no trace CSV" "$work/err"

by_age > "$work/table" 2> "$work/err"
check "without traces: the usage, and a failure" test $? = 2
check "... which says what it takes" grep -q "Usage: bash bench/memory-by-age.sh TRACES" "$work/err"

by_age --help > "$work/table" 2> "$work/err"
check "--help: the usage, and success" test $? = 0
check "... on stdout" grep -q "AGES: the bounds of the age buckets" "$work/table"

# Without simulate's arguments: the shipped defaults, with as many folds as there are executions
# up to 5 (a set of three cannot be cut into 5).
three=$(ls bench/programs/recorded/w/*.csv | head -3 | paste -sd, -)
by_age "$three" > "$work/table" 2> "$work/err"
check "three traces without simulate's arguments: replayed" test $? = 0
check "... with the default policies" test -n "$(row phase)" -a -n "$(row vpa)" -a -n "$(row perfect)"
by_age ../shared/data/ai4dl/sample.csv > "$work/table" 2> "$work/err"
check "one file of four executions without simulate's arguments: replayed" test $? = 0

summary "bench/memory-by-age.sh"
