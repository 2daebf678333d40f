# shellcheck shell=bash
# Sourced by bench/savings.sh and bench/memory-by-age.sh (not run): the trace CSVs that a
# directory (its *.csv) or a comma-separated list of files names, as such a list (empty for a
# directory without any).
runs_list() {
  if [[ -d $1 ]]; then
    ls "$1"/*.csv 2>/dev/null | paste -sd, - || true
  else
    echo "$1"
  fi
}
