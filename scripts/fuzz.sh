#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ (clang, ASan, UBSan) and runs each one for
# FUZZ_SECONDS (default 60) on a copy of its seed corpus in a temporary folder; the committed
# corpus is never written. Fails if a harness finds a crash, a leak, a timeout or an
# out-of-memory, and prints the reproducer's path (kept with the run's logs).
#   FUZZ_SECONDS=3600 bash scripts/fuzz.sh              # longer
#   FUZZ_TARGETS="trace model" bash scripts/fuzz.sh     # some harnesses only
# PHASESCALE_FUZZ_BUILD_DIR picks the build directory (build-fuzz), PHASESCALE_JOBS the
# parallel jobs, FUZZ_OUT_DIR where runs go (a new temporary folder by default).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${PHASESCALE_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
targets=(${FUZZ_TARGETS:-trace model prom_response kube_object kubeconfig quantity label_selector
         autoscaler_spec loan_spec})

# Debian bookworm's clang is 14; libFuzzer and the sanitizer runtimes are in libclang-rt-14-dev.
bash scripts/install-deps.sh clang libclang-rt-14-dev
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPHASESCALE_FUZZ=ON -DPHASESCALE_BUILD_TESTS=OFF -DPHASESCALE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" --target fuzz ${PHASESCALE_JOBS:+--parallel "$PHASESCALE_JOBS"}

out=${FUZZ_OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/phasescale-fuzz.XXXXXX")}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=()
for name in "${targets[@]}"; do
  harness="$build_dir/tests/fuzz/${name}_fuzz"
  if [[ ! -x "$harness" ]]; then
    echo "fuzz: $name: not built (without cpprestsdk only trace and model are), skipped" >&2
    continue
  fi
  run="$out/$name"
  mkdir -p "$run/corpus" "$run/crashes"
  cp -R "tests/fuzz/corpus/$name/." "$run/corpus/"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: 2 GB is a blow-up.
  if "$harness" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$run/crashes/" "$run/corpus" >"$run/log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$name")
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -1)
  echo "fuzz: $name: $status, ${runs:-?} inputs in at most ${seconds}s (log: $run/log)"
  if [[ $status == FAILED ]]; then
    grep -E '^(==[0-9]+== ?ERROR|SUMMARY|fuzz: |  what\(\))' "$run/log" | head -5 | sed 's/^/  /' || true
    for reproducer in "$run"/crashes/*; do
      [[ -e "$reproducer" ]] && echo "  reproducer: $reproducer (rerun: $harness $reproducer)"
    done
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: findings in ${failed[*]}; runs kept in $out" >&2
  exit 1
fi
# Nothing found: the grown corpora are of no further use here.
[[ -n "${FUZZ_OUT_DIR:-}" ]] || rm -rf "$out"
