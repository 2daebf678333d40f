#!/usr/bin/env bash
# stop.sh DIR: stop every process that start.sh DIR started (by the pid files in DIR/run, each
# a process group of its own) and, if the API server still answers, remove the webhook and
# APIService registrations. Safe to call twice, or after a failed start.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/vpa-live.sh" stop "$1"
