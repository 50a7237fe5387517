#!/usr/bin/env bash
# The chart's alert rules (charts/syncguard/files/prometheus-rules.yaml): `promtool check rules`
# (syntax, PromQL, templates) and `promtool test rules` (charts/syncguard/ci/prometheus-rules_test.yaml:
# each alert fires on the series that mean trouble, after its `for`, and not on healthy ones),
# then the Grafana dashboard is valid JSON whose every query names a syncguard metric.
# Needs .tools/bin/promtool (scripts/install-promtool.sh); PROMTOOL overrides.
# Exit 0 when all pass, 1 on a failure, 2 when promtool is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHART="$ROOT/charts/syncguard"
PROMTOOL="${PROMTOOL:-$ROOT/.tools/bin/promtool}"
if [[ ! -x "$PROMTOOL" ]]; then
    echo "check-alerts: no promtool at $PROMTOOL (scripts/install-promtool.sh)" >&2
    exit 2
fi

echo "--> promtool check rules"
"$PROMTOOL" check rules "$CHART/files/prometheus-rules.yaml"
echo "--> promtool test rules"
(cd "$CHART/ci" && "$PROMTOOL" test rules prometheus-rules_test.yaml)

# promtool tests run on synthetic series: a metric renamed in the code would leave the alerts
# silently blind, so every metric the rules and the dashboard query must be one the code registers.
echo "--> the alerts and the Grafana dashboard query registered metrics"
python3 - "$CHART/files/grafana-dashboard.json" "$ROOT/src/metrics.rs" "$CHART/files/prometheus-rules.yaml" <<'PY'
import json, re, sys
dash = json.load(open(sys.argv[1]))
source = open(sys.argv[2]).read()
rules = open(sys.argv[3]).read()
# Every metric the code registers (Registry::with_prefix("syncguard")); counters get _total,
# histograms _bucket/_sum/_count.
names = set(re.findall(r'registry\.register\(\s*"([a-z_]+)"', source))
exposed = set()
for n in names:
    exposed |= {f"syncguard_{n}", f"syncguard_{n}_total", f"syncguard_{n}_bucket"}
bad = []
for p in dash["panels"]:
    for t in p.get("targets", []):
        for m in re.findall(r"\bsyncguard_[a-z_]+", t["expr"]):
            if m not in exposed:
                bad.append(f"panel {p['title']!r}: {m} is not a syncguard metric")
for line in rules.splitlines():
    if line.lstrip().startswith("#"):
        continue
    for m in re.findall(r"\bsyncguard_[a-z_]+", line):
        if m not in exposed:
            bad.append(f"prometheus-rules.yaml: {m} is not a syncguard metric")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print(f"  {len(dash['panels'])} panels and the alert rules, every query on a registered metric")
PY
echo "check-alerts: all checks passed"
