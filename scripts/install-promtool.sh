#!/usr/bin/env bash
# Builds Prometheus' promtool from the Go module proxy into .tools/bin/promtool (git-ignored), to
# check and unit-test the chart's alert rules (scripts/check-alerts.sh). A CI and development aid;
# nothing of it ships.
#
# Idempotent: does nothing when .tools/bin/promtool reports the pinned version. The Go module
# github.com/prometheus/prometheus numbers Prometheus 3.N.M as v0.3NN.M (v0.316.0 = 3.16.0).
# Override with PROMETHEUS_MODULE_VERSION=v0.3xx.y (a version the proxy serves).
# Exit 2 when it cannot be built here (no Go, proxy unreachable), 1 on any other failure.
set -euo pipefail

VERSION="${PROMETHEUS_MODULE_VERSION:-v0.316.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
PROMTOOL="$BIN_DIR/promtool"
STAMP="$BIN_DIR/.promtool-version"

if [[ -x "$PROMTOOL" && "$(cat "$STAMP" 2>/dev/null)" == "$VERSION" ]]; then
    echo "promtool ($VERSION) already installed at $PROMTOOL"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "install-promtool: the Go toolchain is required (go install builds promtool from source)" >&2
    exit 2
fi

mkdir -p "$BIN_DIR"
echo "building promtool (github.com/prometheus/prometheus $VERSION) with $(go version) ..."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# CGO off: a static binary, no C toolchain needed.
if ! CGO_ENABLED=0 GOBIN="$BIN_DIR" GOFLAGS="${GOFLAGS:-} -trimpath" \
    go install "github.com/prometheus/prometheus/cmd/promtool@$VERSION" >"$log" 2>&1; then
    cat "$log" >&2
    if grep -qE 'dial tcp|proxy|no such host|connection refused|i/o timeout|404 Not Found|410 Gone' "$log"; then
        echo "install-promtool: the Go module proxy could not serve promtool $VERSION" >&2
        exit 2
    fi
    exit 1
fi
"$PROMTOOL" --version >/dev/null
echo "$VERSION" >"$STAMP"
echo "promtool ($VERSION) installed at $PROMTOOL"
