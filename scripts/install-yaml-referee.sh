#!/usr/bin/env bash
# Builds the YAML conformance referee (tests/yaml_referee, a small Go program of ours) into
# .tools/bin/yaml-referee (git-ignored). It reads a YAML stream the way Kubernetes and Argo CD do
# (documents cut as client-go cuts them, each converted with sigs.k8s.io/yaml's YAMLToJSON) and
# prints each document's JSON; tests/yaml_conformance.rs holds syncguard's loader to it. The
# sigs.k8s.io/yaml version is the one Kubernetes v1.34.4's go.mod requires (v1.6.0, on
# go.yaml.in/yaml/v2 v2.4.2), pinned in tests/yaml_referee/go.mod and go.sum and fetched from the
# Go module proxy. A CI and development aid; nothing of it ships.
#
# Idempotent: does nothing when the binary was built from the current go.mod, go.sum and main.go
# (a stamp holds their checksum). Exit codes: 0 installed (or already there), 2 cannot be built here
# (no Go, module proxy unreachable), 1 anything else.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/tests/yaml_referee"
BIN_DIR="$ROOT/.tools/bin"
REFEREE="$BIN_DIR/yaml-referee"
STAMP="$BIN_DIR/.yaml-referee-source"

sum="$(cd "$SRC" && cat go.mod go.sum main.go | sha256sum | cut -d' ' -f1)"
if [[ -x "$REFEREE" && "$(cat "$STAMP" 2>/dev/null)" == "$sum" ]]; then
    echo "yaml-referee already built at $REFEREE"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "install-yaml-referee: the Go toolchain is required (the referee is built from the module proxy)" >&2
    exit 2
fi

mkdir -p "$BIN_DIR"
echo "building yaml-referee (sigs.k8s.io/yaml as pinned in tests/yaml_referee/go.mod) with $(go version) ..."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# go.sum pins every module; -mod=readonly refuses to change it. CGO off: no C toolchain needed.
if ! (cd "$SRC" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -trimpath -buildvcs=false" \
    go build -ldflags="-s -w" -o "$REFEREE.tmp" .) >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$REFEREE.tmp"
    if grep -qE 'dial tcp|proxy|no such host|connection refused|i/o timeout|404 Not Found|410 Gone' "$log"; then
        echo "install-yaml-referee: the Go module proxy could not serve the referee's modules" >&2
        exit 2
    fi
    exit 1
fi
mv "$REFEREE.tmp" "$REFEREE"
# A smoke test: 0755 is octal for Kubernetes.
if [[ "$(printf 'a: 0755\n' | "$REFEREE")" != '{"line":1,"json":{"a":493}}' ]]; then
    echo "install-yaml-referee: the built referee does not read 'a: 0755' as 493" >&2
    exit 1
fi
echo "$sum" >"$STAMP"
echo "yaml-referee installed at $REFEREE"
