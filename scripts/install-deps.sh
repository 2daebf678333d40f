#!/usr/bin/env bash
# Installs the Debian bookworm packages that phasescale needs to build and test. Run as root or
# with sudo; when every package is already installed it does nothing, so reruns are fast.
# Arguments name further packages (scripts/fuzz.sh adds clang and its libFuzzer runtime).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev nlohmann-json3-dev libcli11-dev catch2 libbenchmark-dev
  libcpprest-dev libyaml-cpp-dev prometheus-cpp-dev libcivetweb-dev libboost-system-dev libspdlog-dev libssl-dev
  prometheus openssl iproute2 jq python3 clang-format curl
  "$@"
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$package" 2>/dev/null || true)
  [[ "$status" == ii* ]] || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  as_root=(sudo)
fi
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
