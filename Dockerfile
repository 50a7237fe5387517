# The image the Helm chart runs (both Deployments use `syncguard` as the entrypoint), for a machine
# with Docker or Buildah and access to Docker Hub and gcr.io:
#
#   docker build -t ghcr.io/syncguard/syncguard:0.1.0 .
#
# The image CI builds and tests is made without a daemon or a base image by
# scripts/build-image.sh (the release binary, the libraries it links, a nonroot user 65532; an OCI
# archive with a reproducible digest) and run with runc by scripts/run-image.sh (.ci/run, step
# "OCI image"); README.md "Build and push the image" says how to push it. This Dockerfile gives
# an equivalent image (same binary path, entrypoint and user, on distroless) but no CI builds it.
#
# Build stage: the same stable toolchain the project is developed with; --locked so the image has
# exactly the dependency versions CI tested. Runtime stage: distroless with glibc, no shell, runs
# as the non-root user 65532 that the chart's securityContext expects. syncguard writes nothing
# (the built-in rules are read from memory, the mounted TLS and policy directories are only read),
# so the root filesystem is read-only and the chart mounts no writable volume.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin syncguard

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/syncguard /usr/local/bin/syncguard
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/syncguard"]
