#!/usr/bin/env bash
# Installs the dependencies, then configures and builds phasescale (Release, Ninja) in build/.
# PHASESCALE_BUILD_DIR picks another build directory; PHASESCALE_JOBS limits parallel jobs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${PHASESCALE_BUILD_DIR:-build}
bash scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" ${PHASESCALE_JOBS:+--parallel "$PHASESCALE_JOBS"}
