# phasescale image: the phasescale CLI and phasescale-operator on Debian bookworm (docs/image.md).
#
#   bash scripts/build-image.sh                   # buildah, no daemon, no registry
#   bash scripts/build-image.sh --binaries build  # the runtime stage alone, from built binaries
#   docker build -t phasescale:dev .              # with a Docker daemon and Docker Hub
#   docker run --rm phasescale:dev --help                      # the operator (the entrypoint)
#   docker run --rm --entrypoint phasescale phasescale:dev inspect /usr/share/phasescale/default.model.json
#
# The build stage runs scripts/build.sh, the script CI runs (it installs the Debian packages
# with scripts/install-deps.sh, then configures and builds into build/), so a change that breaks
# the image breaks CI first. The runtime stage holds the two binaries, the default model and the
# Debian runtime libraries they link (tests/helm/check-dockerfile.sh checks the list against
# `ldd` of the built binaries, tests/image/image-test.sh inside the built image), and runs as a
# numeric non-root user; it needs no writable directory (a read-only root file system works).

ARG BUILD_IMAGE=debian:bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim
# Where the runtime stage takes /out from: the build stage, or an image that holds /out already
# (scripts/build-image.sh --binaries: the binaries CI built; the build stage is then skipped).
# buildah 1.28 resolves a stage named through an ARG only when it is passed (--build-arg).
ARG BINARIES=build

FROM ${BUILD_IMAGE} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
# The dependencies in a layer of their own: it is reused while only the sources change.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# PHASESCALE_JOBS bounds the compiler's parallel jobs (empty: Ninja's default).
ARG PHASESCALE_JOBS=""
RUN PHASESCALE_JOBS="${PHASESCALE_JOBS}" bash scripts/build.sh \
 && mkdir -p /out/usr/local/bin /out/usr/share/phasescale \
 && install -m 0755 -s build/cli/phasescale build/operator/phasescale-operator /out/usr/local/bin/ \
 && install -m 0644 model/pretrained/default.model.json /out/usr/share/phasescale/

FROM ${BINARIES} AS binaries

FROM ${RUNTIME_IMAGE} AS runtime
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Runtime libraries of the two binaries (ldd): cpprestsdk, yaml-cpp, prometheus-cpp (core),
# civetweb (and its C++ wrapper), OpenSSL; their own dependencies (brotli, zlib, libstdc++)
# come with them. ca-certificates: TLS to a Prometheus behind a public CA.
# BEGIN runtime packages (read by tests/helm/check-dockerfile.sh)
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      libcivetweb1 \
      libcpprest2.10 \
      libprometheus-cpp-core1.0 \
      libssl3 \
      libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/*
# END runtime packages
COPY --from=binaries /out/ /
# 65532: the customary "nonroot" id; numeric, so that runAsNonRoot can verify it.
USER 65532:65532
WORKDIR /
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/phasescale-operator"]
CMD ["--help"]
