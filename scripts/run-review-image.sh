#!/usr/bin/env bash
# The CI test of the review image (scripts/build-image.sh --review): runs the GitLab job in it
# with runc, the way a GitLab runner runs a job in its image, on a merge request of the
# tests/fixtures/gitops repository. See --help.
#
# Exit 2 when it cannot run here (not root, runc/umoci not installable, or the runtime cannot
# start a container on this kernel: the reason is printed); 1 when the image misbehaves; 0 when
# every check passed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -1)"
FIXTURE="$ROOT/tests/fixtures/gitops"
REPO_URL="https://git.example.com/platform/gitops.git"

usage() {
    cat <<EOF
Usage: scripts/run-review-image.sh [ARCHIVE]

Runs the review image in ARCHIVE (default: target/oci/syncguard-review-$VERSION.oci.tar, written
by scripts/build-image.sh --review) with runc and checks it can do the GitLab job alone:

  1. umoci unpacks the archive (checking every blob's digest); the image runs as root with no
     entrypoint and /bin/sh, and the tools the job needs answer: syncguard, helm, kustomize,
     jsonnet, git, python3 (importing what upsert-comment.py imports).
  2. A merge request of tests/fixtures/gitops (base and head commits, created here) is
     bind-mounted as the project directory, with no network: /opt/syncguard/integrations/gitlab/job.sh
     renders its Applications with the image's helm and kustomize, writes
     .syncguard/gl-code-quality.json and the comment, and exits 1 on the new SG201 finding of
     the head, as the GitLab job must.

Everything lives in a temporary directory (the runtime's state included) removed on exit
(RUN_IMAGE_KEEP=1 keeps it). Needs root.

Exit codes: 0 passed; 1 a check failed; 2 cannot run here (the reason is printed).
EOF
}
case "${1:-}" in
    -h | --help) usage; exit 0 ;;
esac
ARCHIVE="${1:-$ROOT/target/oci/syncguard-review-$VERSION.oci.tar}"

fail() { echo "run-review-image: FAIL: $*" >&2; exit 1; }
skip() { echo "run-review-image: cannot run the image here: $*" >&2; exit 2; }
ok() { echo "run-review-image: ok: $*"; }

[[ -f "$ARCHIVE" ]] || fail "no image archive at $ARCHIVE (build it with scripts/build-image.sh --review)"
[[ $(id -u) -eq 0 ]] || skip "needs root (the runtime as root)"
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    if command -v apt-get >/dev/null 2>&1; then
        echo "run-review-image: installing $2 from Debian ..."
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null 2>&1 \
                && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null; } || true
    fi
    command -v "$1" >/dev/null 2>&1 || skip "$1 is required (apt-get install $2) and could not be installed"
}
RT="${OCI_RUNTIME:-runc}"
need "$RT" "$RT"
need umoci umoci
need jq jq
need git git

WORK="$(mktemp -d)"
STATE="$WORK/runtime-state"
ID="syncguard-review-image-$$-$RANDOM"
cleanup() {
    local c
    for c in "$ID-tools" "$ID-job"; do
        "$RT" --root "$STATE" delete --force "$c" >/dev/null 2>&1 || true
    done
    if [[ "${RUN_IMAGE_KEEP:-}" == 1 ]]; then
        echo "run-review-image: kept $WORK (RUN_IMAGE_KEEP=1)"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- 1. unpack and the tools ----------------------------------------------------------------
mkdir -p "$WORK/layout" "$STATE"
tar -xf "$ARCHIVE" -C "$WORK/layout"
umoci unpack --image "$WORK/layout:$VERSION" "$WORK/bundle" >"$WORK/umoci.log" 2>&1 \
    || { cat "$WORK/umoci.log" >&2; fail "umoci could not unpack $ARCHIVE (ref $VERSION)"; }
ROOTFS="$WORK/bundle/rootfs"
base="$WORK/bundle/config.json"
got="$(jq -c '[.process.user.uid, .process.user.gid, .process.args]' "$base")"
[[ "$got" == '[0,0,["/bin/bash"]]' ]] || fail "the image config gives user/command $got, expected root and /bin/bash (GitLab runs its script with the image's shell)"
[[ -x "$ROOTFS/bin/sh" ]] || fail "the image has no /bin/sh"

# runtime_config CWD ENV_JSON MOUNTS_JSON ARGS...: umoci's config with a new network namespace
# (loopback only: the job needs no network here), these mounts, environment and command.
runtime_config() {
    local cwd="$1" env="$2" mounts="$3"
    shift 3
    local args
    # One --arg per argument: an argument (a `sh -c` script) may hold line breaks.
    local a
    args='[]'
    for a in "$@"; do args="$(jq -cn --argjson l "$args" --arg a "$a" '$l + [$a]')"; done
    jq --arg rootfs "$ROOTFS" --arg cwd "$cwd" --argjson env "$env" --argjson mounts "$mounts" \
        --argjson args "$args" '
        .process.terminal = false
        | .process.args = $args
        | .process.cwd = $cwd
        | .process.env += $env
        | .root = {path: $rootfs, readonly: false}
        | .hostname = "runner"
        | .mounts += $mounts
        | .linux.namespaces = ([.linux.namespaces[] | select(.type != "network" and .type != "user")]
            + [{type: "network"}])
        ' "$base"
}

mkdir -p "$WORK/tools"
runtime_config / '[]' '[]' /bin/sh -c '
    set -e
    syncguard --version
    helm version --short
    kustomize version
    jsonnet --version
    git --version
    python3 -c "import json, os, sys, urllib.request, urllib.error, ssl, re, argparse; print(\"python\", sys.version.split()[0])"
' >"$WORK/tools/config.json"
if ! "$RT" --root "$STATE" run --bundle "$WORK/tools" "$ID-tools" >"$WORK/tools.log" 2>&1; then
    cat "$WORK/tools.log" >&2
    if grep -qiE 'cgroup|unshare|clone|namespace|pivot_root|mount|not permitted|permission denied|not supported' "$WORK/tools.log" \
        && ! grep -qiE 'not found|No such file|error while loading' "$WORK/tools.log"; then
        skip "$RT cannot start a container on this machine (see above)"
    fi
    fail "a tool the job needs does not run in the image (see above)"
fi
grep -q "^syncguard $VERSION" "$WORK/tools.log" || { cat "$WORK/tools.log" >&2; fail "syncguard --version did not print syncguard $VERSION"; }
ok "the image runs its tools: $(tr '\n' ';' <"$WORK/tools.log" | sed 's/;$//; s/;/; /g')"

# --- 2. the GitLab job on a merge request ------------------------------------------------------
repo="$WORK/project"
mkdir -p "$repo"
g() { git -C "$repo" -c user.name=Fixture -c user.email=fixture@example.com "$@"; }
g init -q -b main
g remote add origin "$REPO_URL"
cp -R "$FIXTURE/base/." "$repo/"
g add -A && g commit -q -m base
base_sha="$(g rev-parse HEAD)"
cp -R "$FIXTURE/head/." "$repo/"
g add -A && g commit -q -m head
mkdir -p "$WORK/job"
env_json="$(jq -cn --arg base "$base_sha" '[
    "CI=true", "GITLAB_CI=true", "CI_PROJECT_DIR=/builds/project",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA=" + $base, "CI_MERGE_REQUEST_IID=3",
    "SYNCGUARD_PATHS=apps/children/web.yaml"]')"
mounts="$(jq -cn --arg s "$repo" '[{destination: "/builds/project", type: "bind", source: $s, options: ["rbind", "rw"]}]')"
runtime_config /builds/project "$env_json" "$mounts" /bin/sh -c '"$SYNCGUARD_HOME/integrations/gitlab/job.sh"' \
    >"$WORK/job/config.json"
t0=$SECONDS
rc=0
"$RT" --root "$STATE" run --bundle "$WORK/job" "$ID-job" >"$WORK/job.log" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || { tail -n 40 "$WORK/job.log" >&2; fail "the job exited $rc, expected 1 (the head's new SG201 finding)"; }
quality="$repo/.syncguard/gl-code-quality.json"
[[ -f "$quality" ]] || { tail -n 40 "$WORK/job.log" >&2; fail "the job wrote no $quality"; }
jq -e 'any(.[]; .check_name == "SG201")' "$quality" >/dev/null || { cat "$quality" >&2; fail "the Code Quality report has no SG201"; }
grep -q "SG201" "$repo/.syncguard/comment.md" || fail "the comment names no SG201"
grep -q "SYNCGUARD_GITLAB_TOKEN is not set" "$WORK/job.log" || { tail -n 20 "$WORK/job.log" >&2; fail "the job did not say why it wrote no note"; }
ok "the GitLab job reviewed the merge request in $((SECONDS - t0)) s with the image's helm and kustomize: exit 1, SG201 in the Code Quality report and the comment"
