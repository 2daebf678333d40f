# shellcheck shell=bash
# Sourced by bench/savings.sh and bench/memory-by-age.sh (not run). runs_list: the trace CSVs
# that a directory (its *.csv) or a comma-separated list of files names, as such a list (empty for
# a directory without any).
runs_list() {
  if [[ -d $1 ]]; then
    ls "$1"/*.csv 2>/dev/null | paste -sd, - || true
  else
    echo "$1"
  fi
}

# The executions in these files (comma-separated): the distinct values of their pod.id column,
# file by file (an export-trace CSV holds one per container).
executions() {
  local file
  tr ',' '\n' <<<"$1" | while read -r file; do
    [[ -r $file ]] || continue
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { f = $i; gsub(/"/, "", f); if (f == "pod.id") c = i }; next }
             c && !seen[$c]++ { n++ } END { print n + 0 }' "$file"
  done | awk '{ n += $1 } END { print n + 0 }'
}
