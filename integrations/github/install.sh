#!/usr/bin/env bash
# The syncguard binary for the GitHub Action (action.yml): the one given in SYNCGUARD_BIN, else
# built from the action's own source (the syncguard repository at the tag the workflow uses), so
# the binary always matches the action. With INSTALL_RENDER_TOOLS=true the helm and kustomize
# Argo CD 3.6 bundles are built too (scripts/install-render-tools.sh; needs Go, which GitHub's
# runners have) and put first on PATH for the later steps.
#
# Writes SYNCGUARD=<path> to $GITHUB_ENV (or prints it when run outside Actions).
# Exit codes: 0 ready, 2 cannot get a binary here.
set -euo pipefail

ACTION_DIR="${GITHUB_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
export_var() { # NAME VALUE
    if [[ -n "${GITHUB_ENV:-}" ]]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_ENV"; else printf '%s=%s\n' "$1" "$2"; fi
}

if [[ -n "${SYNCGUARD_BIN:-}" ]]; then
    [[ -x "$SYNCGUARD_BIN" ]] || { echo "install: SYNCGUARD_BIN=$SYNCGUARD_BIN is not an executable" >&2; exit 2; }
    bin="$SYNCGUARD_BIN"
else
    command -v cargo >/dev/null 2>&1 || { echo "install: cargo is needed to build syncguard (or give the syncguard input)" >&2; exit 2; }
    echo "install: building syncguard from $ACTION_DIR (cargo build --release --locked) ..."
    cargo build --release --locked --manifest-path "$ACTION_DIR/Cargo.toml" --bin syncguard
    bin="${CARGO_TARGET_DIR:-$ACTION_DIR/target}/release/syncguard"
fi
"$bin" --version >/dev/null
export_var SYNCGUARD "$bin"

if [[ "${INSTALL_RENDER_TOOLS:-false}" == true ]]; then
    "$ACTION_DIR/scripts/install-render-tools.sh"
    export_var SYNCGUARD_HELM "$ACTION_DIR/.tools/render-bin/helm"
    export_var SYNCGUARD_KUSTOMIZE "$ACTION_DIR/.tools/render-bin/kustomize"
    export_var SYNCGUARD_JSONNET "$ACTION_DIR/.tools/render-bin/jsonnet"
fi
