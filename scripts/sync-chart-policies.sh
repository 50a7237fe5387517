#!/usr/bin/env bash
# Copies the rules (policies/*.rego without the *_test.rego files) and policies/config.yaml into
# charts/syncguard/policies/, which the chart turns into the policy ConfigMap. Helm can only read
# files inside the chart, so the chart carries a copy; run this after changing policies/.
#
# Why not the tests: the ConfigMap holds every file, and under Argo CD's default client-side
# apply the whole object must fit into the kubectl.kubernetes.io/last-applied-configuration
# annotation (256 KiB). The rules alone are about half of that; rules plus tests are more. The
# tests run in CI (cargo test, scripts/opa-test.sh).
#
#   scripts/sync-chart-policies.sh           update the copy (adds, replaces, removes files)
#   scripts/sync-chart-policies.sh --check   exit 1 (and say what differs) if the copy is stale
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/policies"
DEST="$ROOT/charts/syncguard/policies"

mode="sync"
case "${1:-}" in
    "") ;;
    --check) mode="check" ;;
    *)
        echo "usage: $0 [--check]" >&2
        exit 2
        ;;
esac

# The files that belong in the copy, as names relative to policies/.
wanted() {
    local f
    for f in "$SRC"/*.rego; do
        [[ "$f" == *_test.rego ]] && continue
        basename "$f"
    done
    echo config.yaml
}

mapfile -t files < <(wanted | LC_ALL=C sort)

if [[ "$mode" == "check" ]]; then
    stale=()
    for f in "${files[@]}"; do
        if [[ ! -f "$DEST/$f" ]]; then
            stale+=("missing: charts/syncguard/policies/$f")
        elif ! cmp -s "$SRC/$f" "$DEST/$f"; then
            stale+=("differs: charts/syncguard/policies/$f")
        fi
    done
    if [[ -d "$DEST" ]]; then
        for g in "$DEST"/*; do
            [[ -e "$g" ]] || continue
            name="$(basename "$g")"
            if ! printf '%s\n' "${files[@]}" | grep -qxF -- "$name"; then
                stale+=("extra: charts/syncguard/policies/$name (not in policies/)")
            fi
        done
    fi
    if ((${#stale[@]})); then
        echo "The chart's copy of the policies is out of date:" >&2
        printf '  %s\n' "${stale[@]}" >&2
        echo "Run scripts/sync-chart-policies.sh and commit charts/syncguard/policies/." >&2
        exit 1
    fi
    echo "charts/syncguard/policies/ is current (${#files[@]} files)"
    exit 0
fi

mkdir -p "$DEST"
for g in "$DEST"/*; do
    [[ -e "$g" ]] || continue
    name="$(basename "$g")"
    if ! printf '%s\n' "${files[@]}" | grep -qxF -- "$name"; then
        rm -f -- "$g"
        echo "removed charts/syncguard/policies/$name"
    fi
done
for f in "${files[@]}"; do
    if ! cmp -s "$SRC/$f" "$DEST/$f" 2>/dev/null; then
        cp -- "$SRC/$f" "$DEST/$f"
        echo "copied policies/$f"
    fi
done
echo "charts/syncguard/policies/ is current (${#files[@]} files)"
