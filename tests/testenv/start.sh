#!/usr/bin/env bash
# start.sh DIR: start the test control plane with its state in DIR (see testenv.sh and
# README.md). Prints the path of DIR/env, which a test sources. A failure while starting
# stops whatever was started. Pair every start with stop.sh DIR, or use with-testenv.sh.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/testenv.sh" start "$1"
