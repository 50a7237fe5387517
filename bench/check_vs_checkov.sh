#!/usr/bin/env bash
# syncguard check vs Checkov's Kubernetes framework on the same generated manifests, side by side
# in one session. Results and how to read them: BENCHMARKS.md.
#
#   bench/check_vs_checkov.sh                 # 1k and 10k objects, 5 timed runs each
#   RUNS=3 SIZES="1000" bench/check_vs_checkov.sh
#   KEEP=1 bench/check_vs_checkov.sh          # keep the manifests and raw results
#
# What it does:
#  1. builds `syncguard` and the `gen_manifests` example in release;
#  2. installs Checkov $CHECKOV_VERSION into .tools/venv (skipped when already there);
#  3. writes the objects of bench/manifests.rs (the criterion benches' input) for each size into
#     a temporary directory, ten documents per file;
#  4. runs each tool once per size (untimed; it also warms the page cache) and checks it really
#     did the work (syncguard: every object counted, findings reported; Checkov: checks passed +
#     failed > 0, no parsing errors, every object counted);
#  5. times every case round-robin with bench/timeit.py (wall, CPU, peak RSS) and prints a
#     markdown table. syncguard also runs pinned to one core (taskset -c 0) for a per-core figure.
#
# The two tools run different rule sets (see BENCHMARKS.md): this compares throughput on the same
# input, not equal work.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${RUNS:-5}"
SIZES="${SIZES:-1000 10000}"
CHECKOV_VERSION="${CHECKOV_VERSION:-3.3.30}"
VENV="$ROOT/.tools/venv"
PYTHON="${PYTHON:-python3}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/syncguard-bench.XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then
  echo "keeping $WORK" >&2
else
  trap 'rm -rf "$WORK"' EXIT
fi

say() { printf '\n== %s\n' "$*" >&2; }

say "machine"
echo "cpus: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" >&2
echo "load before: $(uptime)" >&2

say "build (release)"
(cd "$ROOT" && cargo build --release --quiet --bin syncguard --example gen_manifests)
SYNCGUARD="$ROOT/target/release/syncguard"
GEN="$ROOT/target/release/examples/gen_manifests"

say "Checkov $CHECKOV_VERSION in $VENV"
if [[ "$("$VENV/bin/checkov" --version 2>/dev/null || true)" != "$CHECKOV_VERSION" ]]; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "checkov==$CHECKOV_VERSION"
fi
CHECKOV="$VENV/bin/checkov"
echo "checkov $("$CHECKOV" --version)" >&2
# --skip-download: no call to Prisma Cloud for guidelines (it only adds doc links, and without
# network it costs a failed lookup per run).
CHECKOV_ARGS="--framework kubernetes --quiet --compact --skip-download -o json"

CASES="$WORK/cases.tsv"
: > "$CASES"
for n in $SIZES; do
  dir="$WORK/manifests-$n"
  say "$n objects"
  "$GEN" "$n" "$dir" >&2

  # One validated run of each tool (also warms the page cache).
  "$SYNCGUARD" check "$dir" --format json > "$WORK/syncguard-$n.json" || [[ $? == 1 ]]
  # shellcheck disable=SC2086 # CHECKOV_ARGS is a word list
  "$CHECKOV" -d "$dir" $CHECKOV_ARGS > "$WORK/checkov-$n.json" 2> "$WORK/checkov-$n.err" || [[ $? == 1 ]]
  "$PYTHON" - "$n" "$WORK/syncguard-$n.json" "$WORK/checkov-$n.json" <<'EOF' >&2
import json, sys
n = int(sys.argv[1])
sg = json.load(open(sys.argv[2]))
s = sg["summary"]
assert s["objects"] == n, f"syncguard saw {s['objects']} objects, expected {n}"
assert s["errors"] == 0, f"syncguard reported {s['errors']} load errors"
assert s["total"] > 0, "syncguard reported no findings on manifests with known problems"
ck = json.load(open(sys.argv[3]))
ck = ck if isinstance(ck, dict) else next(r for r in ck if r.get("check_type") == "kubernetes")
c = ck["summary"]
assert ck["check_type"] == "kubernetes", ck["check_type"]
assert c["passed"] + c["failed"] > 0, f"Checkov ran no checks: {c}"
assert c["parsing_errors"] == 0, f"Checkov could not parse some files: {c}"
assert c["resource_count"] >= n * 0.9, f"Checkov scanned only {c['resource_count']} resources"
print(f"syncguard: {s['objects']} objects, {s['total']} findings "
      f"({', '.join(f'{k} {v}' for k, v in s['open_by_action'].items())})")
print(f"checkov:   {c['resource_count']} resources, {c['passed'] + c['failed']} check results "
      f"({c['passed']} passed, {c['failed']} failed)")
EOF

  printf 'syncguard\t%s\t%s check %s --format json\n' "$n" "$SYNCGUARD" "$dir" >> "$CASES"
  printf 'syncguard (1 core)\t%s\ttaskset -c 0 %s check %s --format json\n' "$n" "$SYNCGUARD" "$dir" >> "$CASES"
  printf 'checkov\t%s\t%s -d %s %s\n' "$n" "$CHECKOV" "$dir" "$CHECKOV_ARGS" >> "$CASES"
done

say "timing: $RUNS runs of each case, round-robin"
"$PYTHON" "$ROOT/bench/timeit.py" "$CASES" --runs "$RUNS" --warmup 0 --baseline syncguard --json "$WORK/results.json"

say "done"
echo "load after: $(uptime)" >&2
