#!/usr/bin/env bash
# The GitLab job of integrations/gitlab/syncguard-review.yml: install syncguard (unless SYNCGUARD
# names a binary), review the merge request (integrations/review.sh), post or update the
# merge-request note (and its further parts when the review is long: upsert-comment.py reads
# comment.2.md, ... beside comment.md) when SYNCGUARD_GITLAB_TOKEN is set, and end with the
# review's exit code.
# The Code Quality report and the other files are in $SYNCGUARD_OUT_DIR (default .syncguard/).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export SYNCGUARD_OUT_DIR="${SYNCGUARD_OUT_DIR:-${CI_PROJECT_DIR:-$PWD}/.syncguard}"

# syncguard (and with SYNCGUARD_INSTALL_RENDER_TOOLS=true helm, kustomize and jsonnet) from the
# prebuilt, checksum-verified release assets (integrations/install.sh), unless SYNCGUARD names a
# binary; building from source is only the fallback.
# The review image (scripts/build-image.sh --review) has both already.
if [[ -z "${SYNCGUARD:-}" || ("${SYNCGUARD_INSTALL_RENDER_TOOLS:-false}" == true && -z "${SYNCGUARD_HELM:-}") ]]; then
    installed="$(SYNCGUARD_BIN="${SYNCGUARD:-}" INSTALL_RENDER_TOOLS="${SYNCGUARD_INSTALL_RENDER_TOOLS:-false}" GITHUB_ENV= "$HERE/integrations/install.sh")"
    while IFS='=' read -r name value; do
        [[ -n "$name" ]] && export "$name=$value"
    done <<<"$installed"
fi

"$HERE/integrations/review.sh"
rc="$(cat "$SYNCGUARD_OUT_DIR/exit-code")"

if [[ -n "${SYNCGUARD_GITLAB_TOKEN:-}" && -n "${CI_MERGE_REQUEST_IID:-}" && -f "$SYNCGUARD_OUT_DIR/comment.md" ]]; then
    python3 "$HERE/integrations/upsert-comment.py" --provider gitlab --body "$SYNCGUARD_OUT_DIR/comment.md" || echo "job: the merge-request note could not be written (see above)" >&2
elif [[ -z "${SYNCGUARD_GITLAB_TOKEN:-}" ]]; then
    echo "job: SYNCGUARD_GITLAB_TOKEN is not set; no merge-request note (the Code Quality report still is)"
fi
echo "job: syncguard review exited $rc"
exit "$rc"
