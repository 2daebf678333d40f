#!/usr/bin/env bash
# issue-cert.sh CA OUT SUBJECT server|client [SAN]: makes OUT.key (RSA 2048) and OUT.crt, a
# certificate for SUBJECT (e.g. "/O=system:masters/CN=admin") signed by CA.crt/CA.key, valid
# 10 years, for TLS servers (extendedKeyUsage serverAuth; SAN, e.g.
# "IP:127.0.0.1,DNS:localhost", is then required) or clients (clientAuth). The one place the
# test control plane (testenv.sh) and the scripts beside it (tests/vpa-live/start.sh) issue
# certificates.
set -euo pipefail
[[ $# -ge 4 ]] || { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
ca=$1 out=$2 subject=$3 kind=$4 san=${5:-}
case $kind in
    server) [[ -n $san ]] || { echo "issue-cert.sh: a server certificate needs a SAN" >&2; exit 2; } ;;
    client) ;;
    *) echo "issue-cert.sh: kind must be server or client, not '$kind'" >&2; exit 2 ;;
esac
ext=$(mktemp)
csr=$(mktemp)
trap 'rm -f "$ext" "$csr"' EXIT
{
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=${kind}Auth"
    [[ -z $san ]] || echo "subjectAltName=$san"
} >"$ext"
umask 077
openssl req -newkey rsa:2048 -nodes -keyout "$out.key" -out "$csr" -subj "$subject" 2>/dev/null
# -set_serial: a random serial, no CA.srl file beside the CA.
openssl x509 -req -in "$csr" -CA "$ca.crt" -CAkey "$ca.key" -set_serial "0x$(openssl rand -hex 16)" \
    -out "$out.crt" -days 3650 -extfile "$ext" 2>/dev/null
