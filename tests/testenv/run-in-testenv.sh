#!/usr/bin/env bash
# run-in-testenv.sh DIR CMD [ARGS...]: run CMD with the environment of the test control
# plane that start.sh DIR started (KUBECONFIG, PHASESCALE_TESTENV_*, see README.md), and
# with its kubectl first on the PATH. For test runners that start the control plane once
# (a ctest fixture) and run several tests against it.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DIR CMD [ARGS...]" >&2; exit 2; }
dir=$1
shift
[[ -f $dir/env ]] || { echo "run-in-testenv: $dir/env not found: start the test environment first" >&2; exit 1; }
# shellcheck disable=SC1091
source "$dir/env"
export PATH="$PHASESCALE_TESTENV_BIN:$PATH"
exec "$@"
