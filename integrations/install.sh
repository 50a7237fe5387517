#!/usr/bin/env bash
# syncguard and the render tools for a CI job (the GitHub Action's first step, the GitLab job),
# in seconds: the prebuilt release assets (scripts/package-release.sh) are downloaded, checked
# against the release's SHA256SUMS (and against SYNCGUARD_SHA256 when it pins one) and unpacked
# outside the checkout. Building from source is the fallback, never the default.
#
# Inputs (environment):
#   SYNCGUARD_BIN          use this binary; nothing is downloaded for syncguard
#   SYNCGUARD_VERSION      the release to install (default: the version of this checkout's
#                          Cargo.toml, so the action at tag vX installs release vX)
#   SYNCGUARD_RELEASE_URL  where the assets are (default:
#                          https://github.com/syncguard/syncguard/releases/download/v$VERSION);
#                          http(s):// or file://
#   SYNCGUARD_SHA256       optional: the sha256 the syncguard asset must have, pinned in the
#                          workflow (then a replaced SHA256SUMS cannot pass either)
#   SYNCGUARD_INSTALL      prebuilt (default: download; build from source only if the assets
#                          cannot be fetched and cargo is here), prebuilt-only (never build),
#                          build (always build from this checkout)
#   INSTALL_RENDER_TOOLS   true: also install helm, kustomize and jsonnet (the release's
#                          render-tools asset, else scripts/install-render-tools.sh, which needs Go)
#   SYNCGUARD_INSTALL_DIR  where the files go (default: $RUNNER_TOOL_CACHE, $RUNNER_TEMP or
#                          $TMPDIR, under syncguard-$VERSION); never the checkout
#
# Output: NAME=VALUE lines (SYNCGUARD, and SYNCGUARD_HELM, SYNCGUARD_KUSTOMIZE, SYNCGUARD_JSONNET
# with the render tools) appended to $GITHUB_ENV when set, else printed on stdout; progress goes to
# stderr.
# Exit codes: 0 installed; 1 an asset failed its checksum (never retried by building: a replaced
# asset is an alarm) or anything else failed; 2 nothing can be installed here (assets unreachable
# and no way to build).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "install: $*" >&2; }
die() { say "$*"; exit "${EXIT_CODE:-1}"; }

VERSION="${SYNCGUARD_VERSION:-$(sed -n 's/^version = "\(.*\)"$/\1/p' "$HERE/Cargo.toml" 2>/dev/null | head -1)}"
VERSION="${VERSION#v}"
[[ -n "$VERSION" ]] || die "no version: set SYNCGUARD_VERSION"
RELEASE_URL="${SYNCGUARD_RELEASE_URL:-https://github.com/syncguard/syncguard/releases/download/v$VERSION}"
RELEASE_URL="${RELEASE_URL%/}"
MODE="${SYNCGUARD_INSTALL:-prebuilt}"
case "$MODE" in prebuilt | prebuilt-only | build) ;; *) die "SYNCGUARD_INSTALL must be prebuilt, prebuilt-only or build, got '$MODE'" ;; esac
DEST="${SYNCGUARD_INSTALL_DIR:-${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}}/syncguard-$VERSION}"

case "$(uname -m)" in
    x86_64 | amd64) triple=x86_64-unknown-linux-gnu; goarch=amd64 ;;
    aarch64 | arm64) triple=aarch64-unknown-linux-gnu; goarch=arm64 ;;
    *) triple="unsupported-$(uname -m)"; goarch="$triple" ;;
esac
BIN_ASSET="syncguard-$VERSION-$triple.tar.gz"
TOOLS_ASSET="render-tools-$VERSION-linux-$goarch.tar.gz"

export_var() { # NAME VALUE
    if [[ -n "${GITHUB_ENV:-}" ]]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_ENV"; else printf '%s=%s\n' "$1" "$2"; fi
}

# fetch URL FILE: 0 fetched, 1 not there or unreachable. curl, else python3, else wget, so the
# script runs on slim images too.
fetch() {
    case "$1" in
        file://*) cp "${1#file://}" "$2" 2>/dev/null ;;
        *)
            if command -v curl >/dev/null 2>&1; then
                curl --fail --silent --show-error --location --retry 2 --connect-timeout 10 -o "$2" "$1"
            elif command -v python3 >/dev/null 2>&1; then
                python3 - "$1" "$2" <<'PY'
import shutil, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=30) as r, open(sys.argv[2], "wb") as f:
        shutil.copyfileobj(r, f)
except Exception as e:
    print(f"install: {sys.argv[1]}: {e}", file=sys.stderr)
    sys.exit(1)
PY
            elif command -v wget >/dev/null 2>&1; then
                wget -q -O "$2" "$1"
            else
                say "no curl, python3 or wget to download with"
                return 1
            fi
            ;;
    esac
}

SUMS=""
# The release's SHA256SUMS, fetched once; empty when it cannot be fetched.
sums() {
    if [[ -z "$SUMS" ]]; then
        SUMS="$DEST/SHA256SUMS"
        fetch "$RELEASE_URL/SHA256SUMS" "$SUMS.part" || { rm -f "$SUMS.part"; SUMS=""; return 1; }
        mv "$SUMS.part" "$SUMS"
    fi
}

# get ASSET [PINNED]: downloads and verifies ASSET into $DEST and unpacks it into $DEST/ASSET-dir.
# Returns 1 when it cannot be fetched; exits 1 when it fails a checksum.
get() {
    local asset="$1" pinned="${2:-}" file="$DEST/$1" dir="$DEST/${1%.tar.gz}"
    sums || return 1
    local want
    want="$(awk -v f="$asset" '$2 == f || $2 == "*"f {print $1}' "$SUMS")"
    [[ -n "$want" ]] || { say "$RELEASE_URL/SHA256SUMS has no line for $asset"; return 1; }
    if [[ -n "$pinned" && "$pinned" != "$want" ]]; then
        die "$asset: SHA256SUMS says $want but SYNCGUARD_SHA256 pins $pinned; refusing the release"
    fi
    if [[ ! -f "$file" ]] || [[ "$(sha256sum "$file" | cut -d' ' -f1)" != "$want" ]]; then
        say "downloading $RELEASE_URL/$asset"
        fetch "$RELEASE_URL/$asset" "$file.part" || { rm -f "$file.part"; return 1; }
        mv "$file.part" "$file"
    fi
    local got
    got="$(sha256sum "$file" | cut -d' ' -f1)"
    if [[ "$got" != "$want" ]]; then
        rm -f "$file"
        die "$asset: sha256 $got, but the release says $want; refusing it (a replaced or corrupt download)"
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    tar -xzf "$file" -C "$dir"
}

mkdir -p "$DEST"
case "$DEST/" in "$PWD/"*) die "SYNCGUARD_INSTALL_DIR=$DEST is inside the working directory; syncguard never writes into the checkout" ;; esac

build() {
    command -v cargo >/dev/null 2>&1 || EXIT_CODE=2 die "cannot build syncguard here: no cargo (give SYNCGUARD_BIN, or make the release assets reachable)"
    say "building syncguard from $HERE (cargo build --release --locked) ..."
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$DEST/target}" cargo build --release --locked --manifest-path "$HERE/Cargo.toml" --bin syncguard >&2
    echo "${CARGO_TARGET_DIR:-$DEST/target}/release/syncguard"
}

if [[ -n "${SYNCGUARD_BIN:-}" ]]; then
    [[ -x "$SYNCGUARD_BIN" ]] || die "SYNCGUARD_BIN=$SYNCGUARD_BIN is not an executable"
    bin="$SYNCGUARD_BIN"
elif [[ "$MODE" == build ]]; then
    bin="$(build)"
elif get "$BIN_ASSET" "${SYNCGUARD_SHA256:-}"; then
    bin="$DEST/${BIN_ASSET%.tar.gz}/syncguard"
    say "syncguard $VERSION from the release ($(sha256sum "$DEST/$BIN_ASSET" | cut -c1-12)…, checksum verified)"
elif [[ "$MODE" == prebuilt-only ]]; then
    EXIT_CODE=2 die "$RELEASE_URL/$BIN_ASSET cannot be fetched and SYNCGUARD_INSTALL=prebuilt-only"
else
    say "the release assets cannot be fetched from $RELEASE_URL; building from source instead"
    bin="$(build)"
fi
"$bin" --version >/dev/null || die "$bin does not run on this machine"
export_var SYNCGUARD "$bin"

if [[ "${INSTALL_RENDER_TOOLS:-false}" == true ]]; then
    if [[ "$MODE" != build ]] && get "$TOOLS_ASSET"; then
        tools="$DEST/${TOOLS_ASSET%.tar.gz}"
        say "helm, kustomize and jsonnet from the release (checksum verified)"
    elif [[ "$MODE" == prebuilt-only ]]; then
        EXIT_CODE=2 die "$RELEASE_URL/$TOOLS_ASSET cannot be fetched and SYNCGUARD_INSTALL=prebuilt-only"
    else
        say "building helm, kustomize and jsonnet from the Go module proxy ..."
        "$HERE/scripts/install-render-tools.sh" >&2
        tools="$HERE/.tools/render-bin"
    fi
    for t in helm kustomize jsonnet; do
        [[ -x "$tools/$t" ]] || die "$tools/$t is missing from the render tools"
    done
    export_var SYNCGUARD_HELM "$tools/helm"
    export_var SYNCGUARD_KUSTOMIZE "$tools/kustomize"
    export_var SYNCGUARD_JSONNET "$tools/jsonnet"
fi
