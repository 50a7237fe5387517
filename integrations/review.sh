#!/usr/bin/env bash
# One `syncguard review` for a CI job, writing every file the job needs in one run:
#   $SYNCGUARD_OUT_DIR/comment.md         the pull/merge-request comment (Markdown, within the budget);
#                                         a longer review continues in comment.2.md, comment.3.md, ...
#                                         (part K of N, each within the budget; upsert-comment.py posts
#                                         them all when given comment.md)
#   $SYNCGUARD_OUT_DIR/syncguard.sarif    SARIF with baseline states (GitHub code scanning)
#   $SYNCGUARD_OUT_DIR/gl-code-quality.json  GitLab Code Quality
#   $SYNCGUARD_OUT_DIR/review.json        everything
# and the text review on stdout (the job log); every part of the comment goes to the job summary. It never fails the job itself: the exit code of
# the review goes to $SYNCGUARD_OUT_DIR/exit-code (and to $GITHUB_OUTPUT as exit-code=N when set), so the
# comment and the reports are published first and a later step decides.
#
# Inputs (environment):
#   SYNCGUARD              the binary (default: syncguard on PATH)
#   SYNCGUARD_BASE         the base revision; default: the pull request's base commit
#                          (GitHub: GITHUB_EVENT_PATH's pull_request.base.sha; GitLab:
#                          CI_MERGE_REQUEST_DIFF_BASE_SHA), else origin/$GITHUB_BASE_REF
#   SYNCGUARD_HEAD         the head revision (default HEAD)
#   SYNCGUARD_PATHS        where the Applications are (space-separated, default .)
#   SYNCGUARD_FAIL_ON      deny (default), warn or info
#   SYNCGUARD_FAIL_ON_EXISTING  true: findings already on the base fail too
#   SYNCGUARD_ARGS         more arguments for `syncguard review` (word-split)
#   SYNCGUARD_OUT_DIR                where the files go (default: a new temporary directory)
# A base commit missing from a shallow clone is fetched from origin once.
set -uo pipefail

SYNCGUARD="${SYNCGUARD:-syncguard}"
SYNCGUARD_OUT_DIR="${SYNCGUARD_OUT_DIR:-$(mktemp -d)}"
mkdir -p "$SYNCGUARD_OUT_DIR"
# Parts of an earlier run in the same directory are never posted as this one's.
rm -f "$SYNCGUARD_OUT_DIR"/comment.md "$SYNCGUARD_OUT_DIR"/comment.[0-9]*.md

base="${SYNCGUARD_BASE:-}"
if [[ -z "$base" && -n "${GITHUB_EVENT_PATH:-}" && -f "${GITHUB_EVENT_PATH}" ]]; then
    base="$(python3 -c 'import json,sys; print(((json.load(open(sys.argv[1])).get("pull_request") or {}).get("base") or {}).get("sha") or "")' "$GITHUB_EVENT_PATH")"
fi
[[ -z "$base" ]] && base="${CI_MERGE_REQUEST_DIFF_BASE_SHA:-}"
[[ -z "$base" && -n "${GITHUB_BASE_REF:-}" ]] && base="origin/$GITHUB_BASE_REF"
if [[ -z "$base" ]]; then
    echo "review: no base revision: set SYNCGUARD_BASE (or run on a pull/merge request)" >&2
    echo 2 >"$SYNCGUARD_OUT_DIR/exit-code"
    [[ -n "${GITHUB_OUTPUT:-}" ]] && echo "exit-code=2" >>"$GITHUB_OUTPUT"
    exit 0
fi
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
    echo "review: $base is not in this clone; fetching it from origin ..." >&2
    git fetch --quiet --no-tags origin "$base" >&2 || true
fi

args=(review --base "$base" --head "${SYNCGUARD_HEAD:-HEAD}" --fail-on "${SYNCGUARD_FAIL_ON:-deny}"
    --output "markdown=$SYNCGUARD_OUT_DIR/comment.md" --output "sarif=$SYNCGUARD_OUT_DIR/syncguard.sarif"
    --output "codequality=$SYNCGUARD_OUT_DIR/gl-code-quality.json" --output "json=$SYNCGUARD_OUT_DIR/review.json")
[[ "${SYNCGUARD_FAIL_ON_EXISTING:-false}" == true ]] && args+=(--fail-on-existing)
# shellcheck disable=SC2206 # word splitting is the point of these two
args+=(${SYNCGUARD_ARGS:-} ${SYNCGUARD_PATHS:-.})

"$SYNCGUARD" "${args[@]}"
rc=$?
echo "$rc" >"$SYNCGUARD_OUT_DIR/exit-code"
comments=()
if [[ -f "$SYNCGUARD_OUT_DIR/comment.md" ]]; then
    comments=("$SYNCGUARD_OUT_DIR/comment.md")
    while [[ -f "$SYNCGUARD_OUT_DIR/comment.$((${#comments[@]} + 1)).md" ]]; do
        comments+=("$SYNCGUARD_OUT_DIR/comment.$((${#comments[@]} + 1)).md")
    done
fi
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    {
        echo "exit-code=$rc"
        echo "out-dir=$SYNCGUARD_OUT_DIR"
        [[ -f "$SYNCGUARD_OUT_DIR/comment.md" ]] && echo "markdown=$SYNCGUARD_OUT_DIR/comment.md"
        echo "markdown-parts=${#comments[@]}"
        [[ -f "$SYNCGUARD_OUT_DIR/syncguard.sarif" ]] && echo "sarif=$SYNCGUARD_OUT_DIR/syncguard.sarif"
    } >>"$GITHUB_OUTPUT"
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && ${#comments[@]} -gt 0 ]]; then
    cat "${comments[@]}" >>"$GITHUB_STEP_SUMMARY"
fi
echo "review: syncguard review exited $rc; files in $SYNCGUARD_OUT_DIR" >&2
exit 0
