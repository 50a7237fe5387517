# The image the Helm chart runs (both Deployments use `syncguard` as the entrypoint).
#
#   docker build -t ghcr.io/syncguard/syncguard:0.1.0 .
#
# Build stage: the same stable toolchain the project is developed with; --locked so the image has
# exactly the dependency versions CI tested. Runtime stage: distroless with glibc, no shell, runs
# as the non-root user 65532 that the chart's securityContext expects; the root filesystem can be
# read-only (syncguard writes nothing but temp files for the built-in policies, under /tmp, which
# the chart mounts as an emptyDir).
# Not built by .ci/run (no container runtime there).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin syncguard

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/syncguard /usr/local/bin/syncguard
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/syncguard"]
