#!/usr/bin/env bash
# Builds the CNCF distribution registry (`registry`, github.com/distribution/distribution/v3)
# from the Go module proxy into .tools/bin/registry (git-ignored). tests/render_chart_repo.rs
# starts it on a loopback port with htpasswd (bcrypt) auth and pushes charts to it with
# `helm push`, so that `syncguard render` is tested against a real OCI registry. A test aid only;
# nothing of it ships.
#
# Idempotent: does nothing when .tools/bin/registry already reports the pinned version.
# Override the version with REGISTRY_VERSION=v3.x.y (a version the module proxy serves).
# Exit codes: 0 installed (or already there), 2 cannot be built here (no Go, module proxy
# unreachable), 1 anything else.
set -euo pipefail

REGISTRY_VERSION="${REGISTRY_VERSION:-v3.1.2}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
REGISTRY="$BIN_DIR/registry"

installed_version() {
    # `registry --version` prints "registry github.com/distribution/distribution/v3 v3.1.2".
    "$REGISTRY" --version 2>/dev/null | awk '{ print $NF; exit }'
}

if [[ -x "$REGISTRY" && "$(installed_version)" == "$REGISTRY_VERSION" ]]; then
    echo "registry $REGISTRY_VERSION already installed at $REGISTRY"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "install-registry: the Go toolchain is required (go install builds the registry from source)" >&2
    exit 2
fi

mkdir -p "$BIN_DIR"
echo "building registry $REGISTRY_VERSION with $(go version) ..."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# CGO off: a static binary, no C toolchain needed. The version is stamped the way the project's
# Makefile stamps it, so the check above can read it back.
if ! CGO_ENABLED=0 GOBIN="$BIN_DIR" GOFLAGS="${GOFLAGS:-} -trimpath" go install \
    -ldflags="-s -w -X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
    "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION" >"$log" 2>&1; then
    cat "$log" >&2
    if grep -qE 'dial tcp|proxy|no such host|connection refused|i/o timeout|404 Not Found|410 Gone' "$log"; then
        echo "install-registry: the Go module proxy could not serve the registry's modules" >&2
        exit 2
    fi
    exit 1
fi

got="$(installed_version)"
if [[ "$got" != "$REGISTRY_VERSION" ]]; then
    echo "install-registry: built registry reports '$got', expected $REGISTRY_VERSION" >&2
    exit 1
fi
echo "registry $got installed at $REGISTRY"
