#!/usr/bin/env bash
# Formats every C++ file of the project with .clang-format (Debian's clang-format 14).
#   bash scripts/format.sh           # rewrites the files in place
#   bash scripts/format.sh --check   # changes nothing; fails and names the files not formatted
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format > /dev/null || bash scripts/install-deps.sh clang-format
# Tracked files and new ones not yet added (git ls-files alone would skip a new file unchecked).
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.h' |
  grep -v '^tests/fuzz/corpus/')
if [[ ${1:-} == --check ]]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
  done
  if [[ ${#bad[@]} -gt 0 ]]; then
    echo "format: not formatted (run bash scripts/format.sh): ${bad[*]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
