#!/usr/bin/env bash
# The soak: phasescale-operator over a compressed replay of at least an hour, 500 pods under 10
# PhaseAutoscalers (bench/scale/run.sh), failing when RSS grows more than MAX_RSS_DRIFT percent
# (default 10) between the second and the last quarter of the ticks, open descriptors other than
# connections or threads by more than 2, or when descriptors ever pass twice (plus 10) what the
# first tick had (a leak that levels off: a connection pool per tick, closed when idle, reached
# 366 against 52) or connections the first tick's plus one per write worker (the HTTP clients
# open one per concurrent request and close it once idle: their number follows the writes in
# flight; a bound of 2 on all descriptors once failed a busy machine's run by 3 more).
# Prints the per-tick table and the drift.
#
#   bash bench/soak.sh                       # 720 ticks of 5 s: one hour, 500 pods
#   PODS=50 TICKS=120 TICK=1s bash bench/soak.sh   # the short one CI runs (ctest -L soak)
#
# Build first: ninja -C build phasescale phasescale-operator phasescale-replay-exporter
# (BUILD picks the build directory, default build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD=${BUILD:-build} TICK=${TICK:-5s} TICKS=${TICKS:-720} SCRAPE=${SCRAPE:-5s}
export MAX_RSS_DRIFT=${MAX_RSS_DRIFT:-10}
exec bash "$root/bench/scale/run.sh" "${PODS:-500}" "${AUTOSCALERS:-10}"
