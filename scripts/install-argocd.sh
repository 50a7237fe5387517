#!/usr/bin/env bash
# Builds the real Argo CD (application-controller + repo-server, one binary) and kwok from the Go
# module proxy into .tools/bin (git-ignored), and makes sure redis-server (Debian) is there, for
# the Argo CD scenarios of tests/e2e/ (tests/e2e/argocd.sh). kube-apiserver, kube-controller-manager
# and kube-scheduler come from scripts/install-kube.sh.
#
# Argo CD: github.com/argoproj/argo-cd/v3 cannot be `go install`ed (its go.mod carries a replace
# block pinning every k8s.io/* module, and replace directives only apply in the main module). So
# this script writes a wrapper module (.tools/argocd-build) that requires argo-cd at the pinned
# version and copies that version's own replace block (read from its go.mod in the module cache,
# never typed by hand), then builds `.../v3/cmd` once. The one static binary is every Argo CD
# component; the component is chosen by ARGOCD_BINARY_NAME (argocd-application-controller,
# argocd-repo-server), exactly as in Argo CD's own image, where the names are symlinks.
#
# Only v3.2.x builds from the proxy (reference notes: 3.2.12's zip does not compile, 3.3+ replace
# gitops-engine with a nested module the zip lacks), hence the default. v3.2.11 uses the standalone
# gitops-engine, the "GE" flavour of our sync-semantics spec.
#
# kwok: `go install sigs.k8s.io/kwok/cmd/kwok@KWOK_VERSION` (no replace directives). Its stage
# files (pod/node lifecycles) are read from the module cache by the e2e harness.
#
# Exit codes: 0 installed (or already installed), 2 cannot be built here (no Go, proxy or Debian
# mirror unreachable, version not served) -- callers skip the Argo CD scenarios -- and 1 for any
# other failure. Idempotent: a stamp plus each binary's own version answer make a second run exit
# at once; Go's caches stay in their default places, so a fresh checkout on a machine that built
# before relinks in seconds.
set -euo pipefail

ARGOCD_VERSION="${ARGOCD_VERSION:-v3.2.11}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
BUILD_DIR="$ROOT/.tools/argocd-build"
STAMP="$BIN_DIR/.argocd-tools.stamp"

die() {
    echo "install-argocd: $*" >&2
    exit "${EXIT_CODE:-1}"
}

[[ "$ARGOCD_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]] || die "ARGOCD_VERSION must look like v3.2.11, got '$ARGOCD_VERSION'"
[[ "$KWOK_VERSION" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "KWOK_VERSION must look like v0.8.0, got '$KWOK_VERSION'"

ensure_redis() {
    command -v redis-server >/dev/null 2>&1 && return 0
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "install-argocd: installing redis-server from Debian ..."
        if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null 2>"$BUILD_DIR/apt.err" \
            || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null 2>"$BUILD_DIR/apt.err"; }; then
            # The package starts a system service on 6379; the suite runs its own on a free port.
            service redis-server stop >/dev/null 2>&1 || true
            return 0
        fi
        cat "$BUILD_DIR/apt.err" >&2 || true
    fi
    EXIT_CODE=2 die "redis-server is required (apt-get install redis-server) and could not be installed"
}

installed_ok() {
    [[ -f "$STAMP" && -x "$BIN_DIR/argocd" && -x "$BIN_DIR/kwok" ]] || return 1
    [[ "$(sed -n 's/^argocd=//p' "$STAMP")" == "$ARGOCD_VERSION" ]] || return 1
    [[ "$(sed -n 's/^kwok=//p' "$STAMP")" == "$KWOK_VERSION" ]] || return 1
    local out
    out="$(HOME="$BUILD_DIR" "$BIN_DIR/argocd" version --client --short 2>/dev/null)" || return 1
    [[ "$out" == *"$ARGOCD_VERSION"* ]] || return 1
    out="$("$BIN_DIR/kwok" --version 2>/dev/null)" || return 1
    [[ "$out" == *"${KWOK_VERSION#v}"* ]] || return 1
}

mkdir -p "$BIN_DIR" "$BUILD_DIR"
ensure_redis

if installed_ok; then
    echo "argocd $ARGOCD_VERSION and kwok $KWOK_VERSION already installed in $BIN_DIR; $(redis-server --version | cut -d' ' -f1-3)"
    exit 0
fi

command -v go >/dev/null 2>&1 || EXIT_CODE=2 die "the Go toolchain is required (Argo CD and kwok are built from source)"
command -v jq >/dev/null 2>&1 || EXIT_CODE=2 die "jq is required (apt-get install jq)"

started=$SECONDS
cd "$BUILD_DIR"

# 1. Argo CD's own go.mod, from the module proxy (or the module cache).
echo "install-argocd: reading argo-cd/v3@$ARGOCD_VERSION's go.mod with $(go version) ..."
dl="$(cd / && go mod download -json "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" 2>"$BUILD_DIR/download.err")" || true
argo_mod="$(jq -r '.GoMod // empty' <<<"$dl" 2>/dev/null || true)"
if [[ -z "$argo_mod" || ! -f "$argo_mod" ]]; then
    cat "$BUILD_DIR/download.err" >&2
    jq -r '.Error // empty' <<<"$dl" >&2 2>/dev/null || true
    EXIT_CODE=2 die "could not download argo-cd/v3@$ARGOCD_VERSION from the Go module proxy ($(go env GOPROXY))"
fi
go_directive="$(sed -nE 's/^go ([0-9.]+)$/\1/p' "$argo_mod")"
# The replace directives: the block form and any single-line ones, comments dropped. A local-path
# replacement (=> ./something) cannot be satisfied from the proxy (Argo CD 3.3+'s gitops-engine).
replaces="$(awk '
    /^replace \($/ { inblock = 1; next }
    inblock && /^\)/ { inblock = 0; next }
    inblock { sub(/\/\/.*/, ""); if ($0 ~ /=>/) print; next }
    /^replace [^(]/ { sub(/^replace /, ""); sub(/\/\/.*/, ""); print }
' "$argo_mod" | sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//')"
(($(grep -c '=>' <<<"$replaces") >= 10)) || die "found only $(grep -c '=>' <<<"$replaces") replace directives in $argo_mod; the go.mod layout changed?"
if grep -qE '=>[[:space:]]*\.' <<<"$replaces"; then
    EXIT_CODE=2 die "argo-cd $ARGOCD_VERSION replaces a module with a local path ($(grep -E '=>[[:space:]]*\.' <<<"$replaces" | head -1)); it cannot be built from the module proxy (only v3.2.x can)"
fi

# 2. The wrapper module.
{
    echo "// Generated by scripts/install-argocd.sh; do not edit."
    echo "module syncguard.local/argocd-tools"
    echo
    echo "go ${go_directive:-1.25.0}"
    echo
    echo "require github.com/argoproj/argo-cd/v3 $ARGOCD_VERSION"
    echo
    echo "replace ("
    sed 's/^/	/' <<<"$replaces"
    echo ")"
} >go.mod.new
if ! cmp -s go.mod.new go.mod; then
    mv go.mod.new go.mod
    rm -f go.sum
else
    rm -f go.mod.new
fi

out="$BUILD_DIR/out"
rm -rf "$out"
mkdir -p "$out"
# The version variables Argo CD's Makefile sets, so `argocd version` and the controller's logs
# name the release.
pkg=github.com/argoproj/argo-cd/v3/common
ldflags="-s -w -X $pkg.version=${ARGOCD_VERSION#v} -X $pkg.buildDate=1970-01-01T00:00:00Z -X $pkg.gitTreeState=clean"
echo "install-argocd: building argo-cd $ARGOCD_VERSION (about 7 minutes and 1.7 GB of modules on a cold cache) ..."
if ! CGO_ENABLED=0 GOFLAGS="-mod=mod -trimpath -buildvcs=false" go build -ldflags="$ldflags" -o "$out/argocd" \
    github.com/argoproj/argo-cd/v3/cmd; then
    EXIT_CODE=1 die "go build of argo-cd failed; wrapper module in $BUILD_DIR"
fi

echo "install-argocd: building kwok $KWOK_VERSION ..."
if ! CGO_ENABLED=0 GOBIN="$out" GOFLAGS="-trimpath -buildvcs=false" \
    go install -ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"; then
    EXIT_CODE=1 die "go install of kwok $KWOK_VERSION failed"
fi
mv -f "$out/argocd" "$out/kwok" "$BIN_DIR/"
printf 'argocd=%s\nkwok=%s\ngo=%s\n' "$ARGOCD_VERSION" "$KWOK_VERSION" "$(go env GOVERSION)" >"$STAMP"

if ! installed_ok; then
    HOME="$BUILD_DIR" "$BIN_DIR/argocd" version --client --short 2>&1 | sed 's/^/  argocd: /' >&2 || true
    "$BIN_DIR/kwok" --version 2>&1 | sed 's/^/  kwok: /' >&2 || true
    die "the built binaries do not report argocd $ARGOCD_VERSION / kwok $KWOK_VERSION (above)"
fi
echo "install-argocd: argocd $ARGOCD_VERSION and kwok $KWOK_VERSION installed in $BIN_DIR ($((SECONDS - started)) s)"
