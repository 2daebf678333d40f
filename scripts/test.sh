#!/usr/bin/env bash
# Builds phasescale and runs every test (all ctest labels).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/build.sh
# One style (.clang-format) for every C++ file: a file not formatted fails here, in seconds.
bash scripts/format.sh --check
# The integration tests' control plane (kube-apiserver, etcd, KWOK) is built from Go modules
# once and cached; building it here keeps that out of every test's timeout.
bash tests/testenv/build.sh >/dev/null
# Helm for the chart's tests, likewise (its own cache, tests/helm/build.sh).
bash tests/helm/build.sh >/dev/null
# The real VPA recommender for the vpa.reference tests, likewise (tests/vpa-reference/build.sh).
bash tests/vpa-reference/build.sh >/dev/null
# metrics-server and the VPA's recommender, updater and admission controller for the vpa.live
# tests, likewise (tests/vpa-live/build.sh).
bash tests/vpa-live/build.sh >/dev/null
# The image's Debian base images for tests/image/, likewise (debootstrap, its own cache; it
# installs buildah and debootstrap first; scripts/build-image.sh --base).
bash scripts/build-image.sh --base >/dev/null
ctest --test-dir "${PHASESCALE_BUILD_DIR:-build}" --output-on-failure
# The offline part without cpprestsdk, in a build directory of its own (build-offline): only
# the `phasescale` target and a few checks of it, 2-4 minutes (scripts/offline-check.sh).
bash scripts/offline-check.sh
# The libFuzzer harnesses, about a minute each (tests/fuzz/README.md); clang and its own build
# directory (build-fuzz), so after the tests above.
bash scripts/fuzz.sh
