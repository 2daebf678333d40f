#!/usr/bin/env bash
# phasescale-operator --version: prints "phasescale-operator VERSION (revision REVISION)" with the
# version and revision the build was configured with, on stdout, and exits 0 without needing a
# cluster or Prometheus.
# Usage: version.sh OPERATOR VERSION REVISION
set -uo pipefail
operator=$1 version=$2 revision=$3
out=$("$operator" --version 2>/dev/null)
code=$?
if [[ $code != 0 ]]; then
  echo "FAIL: --version exited $code"
  exit 1
fi
want="phasescale-operator $version (revision $revision)"
if [[ $out != "$want" ]]; then
  echo "FAIL: --version printed '$out', expected '$want'"
  exit 1
fi
echo "ok: $out"
