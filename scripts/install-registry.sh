#!/usr/bin/env bash
# Builds the CNCF distribution registry (github.com/distribution/distribution/v3, pinned in
# tests/oci_registry/go.mod and go.sum, fetched from the Go module proxy) into
# .tools/bin/registry (git-ignored). tests/render_chart_repo.rs starts it on a loopback port with
# htpasswd (bcrypt) auth and pushes charts to it with `helm push`, so that `syncguard render` is
# tested against a real OCI registry. tests/oci_registry/main.go is cmd/registry with only the
# filesystem storage driver and htpasswd auth linked: the S3, Azure and GCS drivers of
# cmd/registry are most of its build (273 s with a cold build cache on 2 busy cores, against
# 93 s for this one; 141 s with the module downloads too; 25 MB instead of 55 MB). A CI and development aid; nothing of it ships.
#
# Idempotent: does nothing when the binary was built from the current go.mod, go.sum and main.go
# (a stamp holds their checksum). Exit codes: 0 installed (or already there), 2 cannot be built
# here (no Go, module proxy unreachable), 1 anything else.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/tests/oci_registry"
BIN_DIR="$ROOT/.tools/bin"
REGISTRY="$BIN_DIR/registry"
STAMP="$BIN_DIR/.registry-source"

sum="$(cd "$SRC" && cat go.mod go.sum main.go | sha256sum | cut -d' ' -f1)"
if [[ -x "$REGISTRY" && "$(cat "$STAMP" 2>/dev/null)" == "$sum" ]]; then
    echo "registry already built at $REGISTRY"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "install-registry: the Go toolchain is required (the registry is built from the module proxy)" >&2
    exit 2
fi

mkdir -p "$BIN_DIR"
echo "building the distribution registry (as pinned in tests/oci_registry/go.mod) with $(go version) ..."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# go.sum pins every module; -mod=readonly refuses to change it. CGO off: a static binary, no C
# toolchain needed.
# GOTOOLCHAIN=local: an older Go says so (exit 2) instead of fetching another toolchain.
if ! (cd "$SRC" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -trimpath -buildvcs=false" \
    go build -ldflags="-s -w" -o "$REGISTRY.tmp" .) >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$REGISTRY.tmp"
    if grep -qE 'dial tcp|proxy|no such host|connection refused|i/o timeout|404 Not Found|410 Gone|requires go' "$log"; then
        echo "install-registry: the Go module proxy could not serve the registry's modules" >&2
        exit 2
    fi
    exit 1
fi
mv "$REGISTRY.tmp" "$REGISTRY"
# A smoke test: the registry's own help names its serve command.
if ! "$REGISTRY" --help 2>&1 | grep -q 'serve'; then
    echo "install-registry: the built registry does not offer 'serve'" >&2
    exit 1
fi
echo "$sum" >"$STAMP"
echo "registry installed at $REGISTRY"
