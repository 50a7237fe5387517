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
# Which releases build from the proxy (measured, docs/argocd-versions.md): v3.2.11 (the standalone
# gitops-engine, the "GE" flavour of our sync-semantics spec; 3.2.12's zip does not compile) and
# v3.6.x, the default. From 3.3 Argo CD replaces the engine with its nested module
# (`github.com/argoproj/argo-cd/gitops-engine/v3 => ./gitops-engine`), which the argo-cd zip lacks;
# from 3.6.0 that module is published on its own, so a local-path replace whose module the proxy
# serves at the required version is dropped, and one it does not serve (3.3-3.5: a placeholder
# pseudo-version) means "cannot be built here" (exit 2). 3.6's go.mod says `go 1.27.0`: a go
# directive newer than the local Go is met with GOTOOLCHAIN (ARGOCD_GOTOOLCHAIN, default go1.27.3,
# downloaded from the proxy like any module).
#
# Each version's binary is kept in .tools/argocd-build/<version>/argocd, so switching
# ARGOCD_VERSION back and forth copies instead of rebuilding; .tools/bin/argocd is the selected one.
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

ARGOCD_VERSION="${ARGOCD_VERSION:-v3.6.1}"
ARGOCD_GOTOOLCHAIN="${ARGOCD_GOTOOLCHAIN:-go1.27.3}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
BUILD_DIR="$ROOT/.tools/argocd-build/$ARGOCD_VERSION"
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

# A binary of this version built before (another ARGOCD_VERSION was selected since): reuse it.
if [[ -x "$BUILD_DIR/argocd" && -x "$BIN_DIR/kwok" && -f "$STAMP" ]] &&
    [[ "$(HOME="$BUILD_DIR" "$BUILD_DIR/argocd" version --client --short 2>/dev/null)" == *"$ARGOCD_VERSION"* ]]; then
    cp -f "$BUILD_DIR/argocd" "$BIN_DIR/argocd"
    sed -i "s/^argocd=.*/argocd=$ARGOCD_VERSION/" "$STAMP"
fi

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
# A go directive newer than the local toolchain: build with ARGOCD_GOTOOLCHAIN from the proxy.
local_go="$(go env GOVERSION)"
local_go="${local_go#go}"
if [[ -n "$go_directive" ]] && [[ "$(printf '%s\n%s\n' "$go_directive" "$local_go" | sort -V | tail -1)" != "$local_go" ]]; then
    export GOTOOLCHAIN="$ARGOCD_GOTOOLCHAIN"
    echo "install-argocd: argo-cd $ARGOCD_VERSION needs go $go_directive; building with GOTOOLCHAIN=$GOTOOLCHAIN"
    (cd / && go version >/dev/null 2>"$BUILD_DIR/toolchain.err") || {
        cat "$BUILD_DIR/toolchain.err" >&2
        EXIT_CODE=2 die "toolchain $GOTOOLCHAIN could not be downloaded from the Go module proxy"
    }
fi

# A local-path replacement (=> ./something) cannot be satisfied from the zip. It is dropped when the
# proxy serves the replaced module at the version argo-cd requires (3.6+: the published engine),
# and the version cannot be built here when it does not (3.3-3.5).
local_paths="$(grep -E '=>[[:space:]]*\.' <<<"$replaces" || true)"
if [[ -n "$local_paths" ]]; then
    while read -r line; do
        mod="$(awk '{print $1}' <<<"$line")"
        req="$(awk -v m="$mod" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$argo_mod")"
        [[ -n "$req" ]] || req="$(awk -v m="$mod" '/^require \($/ {r=1; next} r && /^\)/ {r=0} r && $1 == m {print $2; exit}' "$argo_mod")"
        got=""
        [[ -z "$req" ]] || got="$(cd / && go mod download -json "$mod@$req" 2>>"$BUILD_DIR/download.err" | jq -r 'if .Error then "" else .Zip // "" end' 2>/dev/null || true)"
        if [[ -z "$got" ]]; then
            EXIT_CODE=2 die "argo-cd $ARGOCD_VERSION replaces $mod with a local path and the proxy does not serve $mod@${req:-?}; it cannot be built from the module proxy (v3.2.11 and v3.6.x can)"
        fi
        echo "install-argocd: $mod@$req is published; dropping its local-path replace"
    done <<<"$local_paths"
    replaces="$(grep -vE '=>[[:space:]]*\.' <<<"$replaces")"
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
echo "install-argocd: building argo-cd $ARGOCD_VERSION (7-15 minutes of CPU and about 2 GB of modules on a cold cache) ..."
if ! CGO_ENABLED=0 GOFLAGS="-mod=mod -trimpath -buildvcs=false" go build -ldflags="$ldflags" -o "$out/argocd" \
    github.com/argoproj/argo-cd/v3/cmd; then
    EXIT_CODE=1 die "go build of argo-cd failed; wrapper module in $BUILD_DIR"
fi

if [[ -x "$BIN_DIR/kwok" && "$("$BIN_DIR/kwok" --version 2>/dev/null)" == *"${KWOK_VERSION#v}"* ]]; then
    cp -f "$BIN_DIR/kwok" "$out/kwok"
else
    echo "install-argocd: building kwok $KWOK_VERSION ..."
    if ! GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN="$out" GOFLAGS="-trimpath -buildvcs=false" \
        go install -ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"; then
        EXIT_CODE=1 die "go install of kwok $KWOK_VERSION failed"
    fi
fi
cp -f "$out/argocd" "$BUILD_DIR/argocd"
mv -f "$out/argocd" "$out/kwok" "$BIN_DIR/"
printf 'argocd=%s\nkwok=%s\ngo=%s\n' "$ARGOCD_VERSION" "$KWOK_VERSION" "$(go env GOVERSION)" >"$STAMP"

if ! installed_ok; then
    HOME="$BUILD_DIR" "$BIN_DIR/argocd" version --client --short 2>&1 | sed 's/^/  argocd: /' >&2 || true
    "$BIN_DIR/kwok" --version 2>&1 | sed 's/^/  kwok: /' >&2 || true
    die "the built binaries do not report argocd $ARGOCD_VERSION / kwok $KWOK_VERSION (above)"
fi
echo "install-argocd: argocd $ARGOCD_VERSION and kwok $KWOK_VERSION installed in $BIN_DIR ($((SECONDS - started)) s)"
