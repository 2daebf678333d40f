#!/usr/bin/env bash
# point-node.sh NODE PORT: point KWOK node NODE's "kubelet" at https://127.0.0.1:PORT, where a
# program of the test serves the kubelet's /metrics/resource (phasescale-replay-exporter
# --kubelet-listen 127.0.0.1:PORT). It sets the node's status addresses to InternalIP 127.0.0.1
# (and Hostname NODE) and .status.daemonEndpoints.kubeletEndpoint.Port to PORT; metrics-server
# (--kubelet-preferred-address-types=InternalIP --kubelet-use-node-status-port) then scrapes
# that. KWOK keeps both (tests/testenv/stages/node.yaml). Needs KUBECONFIG (a started test
# control plane's env) and kubectl on the PATH or in PHASESCALE_TESTENV_BIN.
set -euo pipefail
[[ $# -eq 2 ]] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
node=$1 port=$2
[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || { echo "point-node.sh: bad port '$port'" >&2; exit 2; }
kubectl=kubectl
[[ -z ${PHASESCALE_TESTENV_BIN:-} ]] || kubectl=$PHASESCALE_TESTENV_BIN/kubectl
# A merge patch replaces the address list as a whole.
"$kubectl" patch node "$node" --subresource status --type merge -p "$(cat <<JSON
{"status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                          {"type": "Hostname", "address": "$node"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": $port}}}}
JSON
)" >/dev/null
