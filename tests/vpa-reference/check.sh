#!/usr/bin/env bash
# ctest vpa.reference.*: check.sh COMPARE TRACE
# Replays TRACE through the real VPA recommender (the harness build.sh builds, or reuses from its
# cache) and through policy::VpaRecommender (COMPARE, vpa_reference_compare), and fails when
# they differ by more than one histogram bucket at any sample. Run from the project root.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: check.sh COMPARE TRACE" >&2; exit 2; }
compare=$1
trace=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

harness=$(bash "$here/build.sh")
reference=$(mktemp "${TMPDIR:-/tmp}/vpa-reference.XXXXXX.csv")
trap 'rm -f "$reference"' EXIT
"$harness" "$trace" >"$reference"
"$compare" "$trace" "$reference"
