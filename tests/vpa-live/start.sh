#!/usr/bin/env bash
# start.sh DIR: start metrics-server and the VPA (recommender, updater, admission controller)
# against the test control plane whose env is sourced (tests/testenv/start.sh), with their
# state in DIR (see vpa-live.sh and README.md). Prints the path of DIR/env. A failure while
# starting stops whatever was started. Pair every start with stop.sh DIR.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/vpa-live.sh" start "$1"
