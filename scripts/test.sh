#!/usr/bin/env bash
# Builds phasescale and runs every test (all ctest labels).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/build.sh
ctest --test-dir "${PHASESCALE_BUILD_DIR:-build}" --output-on-failure
