#!/usr/bin/env bash
# bench/savings.sh with RUNS: trace CSVs of other programs measured as the set `runs`, replayed
# with the shipped default model, at the defaults and (from 2 executions) at equal risk, and
# again at the operator's default tick of 15 s as the set `runs-tick-15s`; a single
# execution gets the defaults only, RUNS naming no CSV is refused, and an earlier call's `runs`
# reports never mix into the table. Runs of ../shared/data/ stand in for a user's.
# Usage: savings-runs.sh BUILD_DIR   (from the project root)
set -uo pipefail
build=$1
source tests/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
torch=../shared/data/torch
bench() { PHASESCALE_BUILD_DIR=$build SAVINGS_OUT=$work/out RUNS_ONLY=1 bash bench/savings.sh; }
rows() { grep -c "^| ${2:-runs} | $1 |" "$work/table"; }

RUNS=$torch/dev01-mlp.csv,$torch/dev05-ae.csv bench > "$work/table" 2> "$work/err"
check "two runs: the defaults and equal risk, CPU and memory" \
  test "$(rows defaults)" = 2 -a "$(rows "equal risk")" = 2
check "two runs: both reports written" \
  test -s "$work/out/runs.defaults.json" -a -s "$work/out/runs.json"
check "equal risk: each run held out once" \
  jqt '.settings.folds | length == 2' "$work/out/runs.json"
check "every policy starts from 2 cores and 4 GiB (static holds them)" \
  jqt '.policies.static | .memory.allocated / .cpu.allocated == 2147483648' \
  "$work/out/runs.defaults.json"
check "at the operator's tick too: the defaults and equal risk" \
  test "$(rows defaults runs-tick-15s)" = 2 -a "$(rows "equal risk" runs-tick-15s)" = 2
check "... observed once per 15 s" \
  jqt '.settings.tick_seconds == 15' "$work/out/runs-tick-15s.json"
check "... and every sample observed in the set runs" \
  jqt '.settings.tick_seconds == 0' "$work/out/runs.json"
check "only the runs in the table" \
  test "$(grep -c '^| ' "$work/table")" = 10

RUNS=../shared/data/ai4dl/sample.csv RUNS_STATIC="" bench > "$work/table" 2> "$work/err"
check "one file of 4 executions: equal risk too, each held out once" \
  jqt '.settings.folds | length == 4' "$work/out/runs.json"
check "... from the requests the trace records" \
  jqt '.policies.static.cpu.allocated > 0' "$work/out/runs.defaults.json"

mkdir "$work/one" && cp "$torch/dev05-ae.csv" "$work/one/"
RUNS=$work/one bench > "$work/table" 2> "$work/err"
check "a directory of one run: the defaults only" \
  test "$(rows defaults)" = 2 -a "$(rows "equal risk")" = 0
check "the equal-risk report of the earlier call is gone" test ! -e "$work/out/runs.json"
check "... at the tick too" \
  test ! -e "$work/out/runs-tick-15s.json" -a -s "$work/out/runs-tick-15s.defaults.json"

mkdir "$work/empty"
RUNS=$work/empty bench > "$work/table" 2> "$work/err"
status=$?
check "RUNS naming no trace CSV is refused" test "$status" = 2
check "... saying so" grep -q "names no trace CSV" "$work/err"

summary "bench/savings.sh RUNS"
