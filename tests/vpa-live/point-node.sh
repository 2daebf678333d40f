#!/usr/bin/env bash
# point-node.sh NODE [IP:]PORT: point KWOK node NODE's "kubelet" at https://IP:PORT (IP
# 127.0.0.1 unless given), where a program of the test serves the kubelet's /metrics/resource
# (phasescale-replay-exporter --kubelet-listen IP:PORT). It sets the node's status addresses to
# InternalIP IP (and Hostname NODE) and .status.daemonEndpoints.kubeletEndpoint.Port to PORT;
# metrics-server (--kubelet-preferred-address-types=InternalIP --kubelet-use-node-status-port)
# then scrapes that, and KWOK keeps both (tests/testenv/stages/node.yaml). Needs KUBECONFIG (a
# started test control plane's env) and kubectl on the PATH or in PHASESCALE_TESTENV_BIN.
set -euo pipefail
[[ $# -eq 2 ]] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
node=$1 ip=127.0.0.1 port=$2
if [[ $port == *:* ]]; then ip=${port%:*} port=${port##*:}; fi
[[ $ip =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "point-node.sh: '$ip' is no IPv4 address" >&2; exit 2; }
[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || { echo "point-node.sh: bad port '$port'" >&2; exit 2; }
kubectl=kubectl
[[ -z ${PHASESCALE_TESTENV_BIN:-} ]] || kubectl=$PHASESCALE_TESTENV_BIN/kubectl
# A merge patch replaces the address list as a whole.
"$kubectl" patch node "$node" --subresource status --type merge -p "$(cat <<JSON
{"status": {"addresses": [{"type": "InternalIP", "address": "$ip"},
                          {"type": "Hostname", "address": "$node"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": $port}}}}
JSON
)" >/dev/null
