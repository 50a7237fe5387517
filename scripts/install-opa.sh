#!/usr/bin/env bash
# Builds the OPA CLI from the Go module proxy into .tools/bin/opa (git-ignored), so that the
# Rego rules in policies/ can be checked and tested against the reference implementation too.
# syncguard itself evaluates the rules with regorus; OPA is a development and CI aid only.
#
# Idempotent: does nothing when .tools/bin/opa already reports the pinned version.
# Override the version with OPA_VERSION=v1.x.y (it must be a version the module proxy serves).
set -euo pipefail

OPA_VERSION="${OPA_VERSION:-v1.22.3}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
OPA="$BIN_DIR/opa"

installed_version() {
    # `opa version` prints "Version: 1.22.3" (no leading v).
    "$OPA" version 2>/dev/null | awk -F': ' '$1 == "Version" { print "v" $2; exit }'
}

if [[ -x "$OPA" && "$(installed_version)" == "$OPA_VERSION" ]]; then
    echo "opa $OPA_VERSION already installed at $OPA"
    exit 0
fi

if ! command -v go >/dev/null 2>&1; then
    echo "install-opa: the Go toolchain is required (go install builds OPA from source)" >&2
    exit 2
fi

mkdir -p "$BIN_DIR"
echo "building opa $OPA_VERSION with $(go version) ..."
# CGO off: a static binary, and no C toolchain needed. The build cache makes re-runs cheap.
CGO_ENABLED=0 GOBIN="$BIN_DIR" GOFLAGS="${GOFLAGS:-} -trimpath" \
    go install "github.com/open-policy-agent/opa@$OPA_VERSION"

got="$(installed_version)"
if [[ "$got" != "$OPA_VERSION" ]]; then
    echo "install-opa: built opa reports '$got', expected $OPA_VERSION" >&2
    exit 1
fi
echo "opa $got installed at $OPA"
