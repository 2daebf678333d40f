#!/usr/bin/env bash
# A kubeconfig exec credential plugin for the tests (tests/kube/kube_exec_test.cpp). Its state is
# in the folder $PLUGIN_DIR (set through the kubeconfig's exec.env):
#   runs        how many times it ran (it adds one each time)
#   tokens      the token of run N is line N (the last line once they run out)
#   cert, key   if both exist: a client certificate and key (PEM) instead of a token
#   expires-in  if it exists: status.expirationTimestamp is now plus this many seconds (may be
#               negative)
#   fail        if it exists: its text goes to stderr and the plugin exits 1
# $1 is the apiVersion to answer with. It refuses to run unless KUBERNETES_EXEC_INFO says the
# same apiVersion and interactive false, as the client must set it.
set -euo pipefail
api_version=$1
dir=${PLUGIN_DIR:?PLUGIN_DIR is not set}

# Several clients may run it at once (the operator has two): count under a lock.
exec 9>>"$dir/lock"
flock 9
runs=$(( $(cat "$dir/runs" 2>/dev/null || echo 0) + 1 ))
echo "$runs" > "$dir/runs"
flock -u 9
echo "exec-plugin: run $runs" >&2

info=${KUBERNETES_EXEC_INFO:-}
if [[ $info != *"\"apiVersion\":\"$api_version\""* || $info != *'"interactive":false'* ]]; then
    echo "exec-plugin: unexpected KUBERNETES_EXEC_INFO: $info" >&2
    exit 2
fi
if [[ -e $dir/fail ]]; then
    cat "$dir/fail" >&2
    exit 1
fi

# PEM as a JSON string: newlines escaped (PEM has no quotes or backslashes).
json_pem() { awk '{printf "%s\\n", $0}' "$1"; }

if [[ -e $dir/cert && -e $dir/key ]]; then
    status="\"clientCertificateData\":\"$(json_pem "$dir/cert")\",\"clientKeyData\":\"$(json_pem "$dir/key")\""
else
    token=$(sed -n "${runs}p" "$dir/tokens")
    [[ -n $token ]] || token=$(tail -n 1 "$dir/tokens")
    status="\"token\":\"$token\""
fi
if [[ -e $dir/expires-in ]]; then
    status+=",\"expirationTimestamp\":\"$(date -u -d "$(cat "$dir/expires-in") seconds" +%Y-%m-%dT%H:%M:%SZ)\""
fi
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{%s}}\n' "$api_version" "$status"
