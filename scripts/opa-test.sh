#!/usr/bin/env bash
# Checks and tests the Rego rules in policies/ with the reference OPA implementation:
#   1. `opa check --strict` — parse and type-check everything as Rego v1, rejecting unused
#      variables/imports, shadowed names and deprecated builtins;
#   2. `opa fmt --list`     — every file is in canonical `opa fmt` form;
#   3. `opa test -v`        — run every test_* rule of policies/*_test.rego.
# syncguard evaluates the same files with regorus (`syncguard test`); the tests deliberately use
# only builtins both engines implement. OPA is built by scripts/install-opa.sh when missing.
# Usage: scripts/opa-test.sh [extra `opa test` args, e.g. --run hook_job]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/install-opa.sh" >/dev/null
OPA="$ROOT/.tools/bin/opa"

echo "== opa $("$OPA" version | awk -F': ' '$1 == "Version" { print $2 }'): check --strict policies/"
"$OPA" check --strict --v1-compatible policies/

echo "== opa fmt --list policies/"
unformatted="$("$OPA" fmt --list policies/)"
if [[ -n "$unformatted" ]]; then
    echo "not in opa fmt form (run: .tools/bin/opa fmt -w policies/):" >&2
    echo "$unformatted" >&2
    exit 1
fi

echo "== opa test -v policies/"
"$OPA" test -v "$@" policies/
