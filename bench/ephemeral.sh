#!/usr/bin/env bash
# What `check --ephemeral-cluster` costs: the throwaway control plane's start to ready, and each
# object's dry-run on it.
#
#   bench/ephemeral.sh [--sizes 1,200,1000] [--runs 3]
#
# For every N in --sizes it writes N objects (a mix of Deployments, Services, ConfigMaps and
# Secrets over 10 namespaces, as a chart of N/4 services would render them) and runs
# `syncguard check --ephemeral-cluster` on them --runs times, taking the median wall time and
# the "ready in" time syncguard prints. The per-object cost is (median(N) - median(1)) / (N - 1):
# start, seeding, stop and the offline evaluation are paid once, the rest is per object.
# Binaries: SYNCGUARD_BIN (default target/release/syncguard, else target/debug/syncguard) and
# SYNCGUARD_KUBE_BINARIES (default .tools/bin, scripts/install-kube.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZES="1,200,1000"
RUNS=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) SIZES="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    *) echo "usage: $0 [--sizes 1,200,1000] [--runs 3]" >&2; exit 2 ;;
  esac
done
BIN="${SYNCGUARD_BIN:-}"
if [[ -z "$BIN" ]]; then
  BIN="$ROOT/target/release/syncguard"
  [[ -x "$BIN" ]] || BIN="$ROOT/target/debug/syncguard"
fi
[[ -x "$BIN" ]] || { echo "no syncguard binary (cargo build --release)" >&2; exit 2; }
KUBE="${SYNCGUARD_KUBE_BINARIES:-$ROOT/.tools/bin}"
[[ -x "$KUBE/kube-apiserver" && -x "$KUBE/etcd" ]] || { echo "no kube-apiserver/etcd in $KUBE (scripts/install-kube.sh)" >&2; exit 2; }
command -v bc >/dev/null || { echo "bc is needed (apt-get install bc)" >&2; exit 2; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

gen() { # gen N DIR
  python3 - "$1" "$2" <<'PY'
import sys, os
n, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
docs = []
for i in range(n):
    ns = f"team-{i % 10}"
    k = i % 4
    name = f"svc-{i // 4}"
    if k == 0:
        docs.append(f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports: [{{containerPort: 8080}}]
        resources: {{requests: {{cpu: 100m, memory: 128Mi}}}}
""")
    elif k == 1:
        docs.append(f"""apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {ns}}}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 80, targetPort: 8080}}]
""")
    elif k == 2:
        docs.append(f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: {name}, namespace: {ns}}}
data: {{LOG_LEVEL: info, FEATURE: "on"}}
""")
    else:
        docs.append(f"""apiVersion: v1
kind: Secret
metadata: {{name: {name}, namespace: {ns}}}
stringData: {{password: not-a-secret}}
""")
open(os.path.join(out, "objects.yaml"), "w").write("---\n".join(docs))
PY
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# check --ephemeral-cluster: $("$KUBE/kube-apiserver" --version), $(nproc) cores, $(basename "$BIN") $(dirname "$BIN" | xargs basename)"
printf '%8s %12s %12s\n' objects wall_s ready_s
declare -A WALL
IFS=, read -r -a sizes <<<"$SIZES"
for n in "${sizes[@]}"; do
  gen "$n" "$WORK/in-$n"
  walls=() readies=()
  for _ in $(seq 1 "$RUNS"); do
    start=$(date +%s.%N)
    "$BIN" check --ephemeral-cluster --kube-binaries "$KUBE" --format json "$WORK/in-$n" >"$WORK/out.json" 2>"$WORK/err.txt" || true
    end=$(date +%s.%N)
    grep -q '"kind": "ephemeral"' "$WORK/out.json" || { cat "$WORK/err.txt" >&2; echo "run failed" >&2; exit 1; }
    walls+=("$(echo "$end - $start" | bc -l)")
    readies+=("$(sed -n 's/.*ready in \([0-9.]*\) s.*/\1/p' "$WORK/err.txt")")
  done
  w=$(printf '%s\n' "${walls[@]}" | median)
  r=$(printf '%s\n' "${readies[@]}" | median)
  WALL[$n]=$w
  printf '%8d %12.2f %12.2f\n' "$n" "$w" "$r"
done
first="${sizes[0]}"
for n in "${sizes[@]:1}"; do
  printf 'per object (N=%d vs N=%d): %.1f ms\n' "$n" "$first" "$(echo "(${WALL[$n]} - ${WALL[$first]}) * 1000 / ($n - $first)" | bc -l)"
done
