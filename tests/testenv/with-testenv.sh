#!/usr/bin/env bash
# with-testenv.sh CMD [ARGS...]: start the test control plane, run CMD with its
# environment (KUBECONFIG, PHASESCALE_TESTENV_*; see README.md), always stop the control
# plane afterwards, and exit with CMD's exit code (or start's, if starting failed).
#
# The state goes to $PHASESCALE_TESTENV_DIR if set (kept afterwards, for its logs),
# else to a temporary directory that is removed when CMD succeeded. If this script is
# killed outright (SIGKILL, e.g. by a test timeout), a watchdog started with the
# control plane notices and stops it.
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ -n ${PHASESCALE_TESTENV_DIR:-} ]]; then
    dir=$PHASESCALE_TESTENV_DIR
    keep=1
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/phasescale-testenv.XXXXXX")
    keep=0
fi

rc=1
cleanup() {
    "$here/testenv.sh" stop "$dir" || rc=1
    if ((rc == 0 && keep == 0)); then
        rm -rf "$dir"
    else
        echo "with-testenv: state and logs kept in $dir" >&2
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'rc=130; exit 130' INT
trap 'rc=143; exit 143' TERM

env_file=$(PHASESCALE_TESTENV_OWNER_PID=$$ "$here/testenv.sh" start "$dir") || { rc=$?; exit "$rc"; }
# shellcheck disable=SC1090
source "$env_file"
"$@"
rc=$?
exit "$rc"
