#!/usr/bin/env bash
# Packs the release assets that the GitHub Action and the GitLab template install from
# (integrations/install.sh): the syncguard binary and the render tools Argo CD's repo-server runs
# (helm, kustomize, jsonnet at the versions scripts/install-render-tools.sh pins), each as a
# reproducible tar.gz, and SHA256SUMS over both. See --help.
#
# Reproducible: sorted entries, numeric owner 0, every mtime set to SOURCE_DATE_EPOCH (default:
# the HEAD commit's time, else 0), gzip without name or time stamp, so the same binaries give the
# same checksums.
# Exit codes: 0 packed; 1 failure; 2 a binary cannot be built here (no cargo, no Go).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -1)"
BINARY=""
TOOLS=""
OUT="$ROOT/target/release-assets"
TARGET=""

usage() {
    cat <<EOF
Usage: scripts/package-release.sh [--binary PATH] [--render-tools DIR] [--out DIR]
                                  [--version V] [--target TRIPLE]

Writes into DIR (default target/release-assets):
  syncguard-V-TRIPLE.tar.gz          the syncguard binary (and LICENSE/README when present)
  render-tools-V-OS-ARCH.tar.gz      helm, kustomize and jsonnet as Argo CD's repo-server runs them
  SHA256SUMS                         sha256sum lines for both
Upload all three as assets of the release tagged vV; integrations/install.sh fetches them from
\$SYNCGUARD_RELEASE_URL (default https://github.com/syncguard/syncguard/releases/download/vV)
and refuses any file whose checksum differs.

  --binary PATH        the syncguard binary to pack (default: cargo build --release --locked)
  --render-tools DIR   a directory holding helm, kustomize and jsonnet (default: .tools/render-bin,
                       built by scripts/install-render-tools.sh when missing)
  --out DIR            where the assets go
  --version V          the release version (default: Cargo.toml's, $VERSION)
  --target TRIPLE      the Rust target the binary is for (default: this machine's,
                       x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu)

Exit codes: 0 packed; 1 failure; 2 a binary cannot be built on this machine.
EOF
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --binary) BINARY="${2:?--binary needs a path}"; shift 2 ;;
        --render-tools) TOOLS="${2:?--render-tools needs a directory}"; shift 2 ;;
        --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
        --version) VERSION="${2:?--version needs a version}"; shift 2 ;;
        --target) TARGET="${2:?--target needs a triple}"; shift 2 ;;
        *) echo "package-release: unknown argument '$1' (see --help)" >&2; exit 1 ;;
    esac
done

die() { echo "package-release: $*" >&2; exit "${EXIT_CODE:-1}"; }

case "$(uname -m)" in
    x86_64 | amd64) triple=x86_64-unknown-linux-gnu; goarch=amd64 ;;
    aarch64 | arm64) triple=aarch64-unknown-linux-gnu; goarch=arm64 ;;
    *) die "no release target for machine $(uname -m)" ;;
esac
TARGET="${TARGET:-$triple}"

if [[ -z "$BINARY" ]]; then
    command -v cargo >/dev/null 2>&1 || EXIT_CODE=2 die "cargo is needed to build the binary (or give --binary)"
    cargo build --release --locked --manifest-path "$ROOT/Cargo.toml" --bin syncguard
    BINARY="${CARGO_TARGET_DIR:-$ROOT/target}/release/syncguard"
fi
[[ -x "$BINARY" ]] || die "$BINARY is not an executable"
if [[ -z "$TOOLS" ]]; then
    TOOLS="$ROOT/.tools/render-bin"
    for t in helm kustomize jsonnet; do
        if [[ ! -x "$TOOLS/$t" ]]; then
            "$ROOT/scripts/install-render-tools.sh"
            break
        fi
    done
fi
for t in helm kustomize jsonnet; do
    [[ -x "$TOOLS/$t" ]] || die "$TOOLS/$t is missing (give --render-tools DIR holding helm, kustomize and jsonnet)"
done

if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
    SOURCE_DATE_EPOCH="$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)"
fi
export SOURCE_DATE_EPOCH

# One reproducible tar.gz of the files in STAGE, named NAME, in OUT.
pack() { # STAGE NAME
    (cd "$1" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
        tar --null --no-recursion -T - --numeric-owner --owner=0 --group=0 \
            --mtime="@$SOURCE_DATE_EPOCH" --mode='u+rwX,go+rX,go-w' -cf -) |
        gzip -n >"$OUT/$2"
}

mkdir -p "$OUT"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

bin_asset="syncguard-$VERSION-$TARGET.tar.gz"
mkdir -p "$stage/bin"
cp "$BINARY" "$stage/bin/syncguard"
for f in LICENSE README.md; do
    [[ -f "$ROOT/$f" ]] && cp "$ROOT/$f" "$stage/bin/"
done
pack "$stage/bin" "$bin_asset"

tools_asset="render-tools-$VERSION-linux-$goarch.tar.gz"
mkdir -p "$stage/tools"
for t in helm kustomize jsonnet; do cp "$TOOLS/$t" "$stage/tools/$t"; done
pack "$stage/tools" "$tools_asset"

(cd "$OUT" && sha256sum "$bin_asset" "$tools_asset" >SHA256SUMS)
echo "package-release: wrote $OUT/{$bin_asset,$tools_asset,SHA256SUMS}"
cat "$OUT/SHA256SUMS"
