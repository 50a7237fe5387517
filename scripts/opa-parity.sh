#!/usr/bin/env bash
# Compares regorus (what syncguard runs) with OPA (the reference implementation) on every rule of
# policies/, for every input document syncguard builds over tests/fixtures/manifests/* and
# examples/*: violations (msg, path, severity) and patches must be identical. See
# tests/opa_parity.rs. Builds OPA into .tools/bin/opa first when it is missing
# (scripts/install-opa.sh, needs Go). Extra args go to the test binary (e.g. --exact NAME).
#
#   scripts/opa-parity.sh
#   SYNCGUARD_PARITY_POLICIES=/path/to/wip-policies scripts/opa-parity.sh   # rules in progress
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/install-opa.sh" >/dev/null

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
SYNCGUARD_OPA="$ROOT/.tools/bin/opa" cargo test --test opa_parity -- --nocapture --test-threads=1 "$@" 2>&1 \
    | tee "$log" || status=$?

summary="$(grep -E '^OPA parity: ' "$log" | tail -n 1 || true)"
if [[ -z "$summary" ]]; then
    echo "opa-parity: the parity test did not run (see the output above)" >&2
    exit 1
fi
echo
echo "$summary"
exit "$status"
