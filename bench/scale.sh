#!/usr/bin/env bash
# Scale harness (issue 14): `syncguard reconcile` and `syncguard serve --cluster` against a real
# local kube-apiserver + etcd holding N Argo CD Applications with realistic status.
#
#   bench/scale.sh [--sizes 1000,5000,10000] [--resources 50] [--namespaces 5]
#                  [--dest-namespaces 20] [--live-share 0.02] [--reviews 2000]
#                  [--flip-rounds 3] [--loop-syncs 2] [--api-qps QPS] [--sweep-timeout S]
#                  [--threads 12] [--skip-build] [--keep] [--out FILE]
#
#   bench/scale.sh --sizes 200 --skip-build        # smoke test, ~2-3 min with built binaries
#
# For every N in --sizes, on a FRESH control plane (tests/e2e/control-plane.sh; etcd and
# kube-apiserver from .tools/bin, scripts/install-kube.sh), with the API server's audit log on for
# syncguard's own client identities only (syncguard-rec-a, syncguard-rec-b, syncguard-webhook:
# one client certificate each, group system:masters):
#
#  1. bench/scale_gen.py creates the namespaces (argocd, apps-1..apps-K-1 for the Applications,
#     team-00..team-D-1 as destinations) and N Applications in parallel HTTPS POSTs over
#     keep-alive (--threads connections). Each has --resources entries in status.resources
#     (ServiceAccount, ExternalSecret, ConfigMaps, Secret, PreSync/PostSync hook Jobs,
#     ServiceMonitor, Deployment/Service/ConfigMap triples; waves -1..5), sync/health,
#     a Succeeded operationState with syncResult for every resource, and 10 history entries 12 h
#     apart. ~3 % are stuck (operation Running for 45 min on a Running PreSync Job hook: SG501),
#     ~3 % flip (step 3: SG502).
#  2. the live objects of --live-share of the apps (at least one): their Deployments, Services,
#     ConfigMaps, Secrets, ServiceAccount and PreSync Job in the destination namespace, with
#     tracking ids (what the audit lists and judges).
#  3. `syncguard reconcile` (replica a: leader election on, Lease in namespace syncguard, audit
#     on with --audit-interval 1h, so exactly one pass runs: when the Lease is won). Timed from
#     spawn: /readyz, Lease won, reconciles >= N, leader sweep done (leader, >= N reconciles and
#     no further reconcile for 4 s: the time of the last one), audit pass (histogram sum/count).
#     Then the flip apps are flipped Synced <-> OutOfSync --flip-rounds times (a new finished sync
#     of the same revision on every Synced; each wave waits until a has reconciled it), so SG502
#     fires with --loop-syncs (2 by default here, 5 in the product). Then replica b starts as
#     standby, a gets SIGTERM, and b is timed from the SIGTERM: Lease won, sweep done (every app
#     reconciled again as leader), its audit pass.
#  4. `syncguard serve --cluster` (debug logging for syncguard::webhook::service): spawn ->
#     "application cache synced", RSS, then --reviews AdmissionReviews (plus 100 warm-up and one
#     first "cold" review) of a tracked PreSync hook Job of one --resources-resource Application,
#     POSTed to https://127.0.0.1:PORT/validate over one keep-alive connection (no API server in
#     the path). Server-side latency from the `elapsed_us` log fields, client-side from the
#     client.
#  5. counts from the audit log (requests per identity, verb and resource, per phase; busiest
#     second), syncguard's events.k8s.io Events, PolicyReport sizes (compact JSON per item).
#
# Prints three markdown tables (reconciler, API requests and writes, webhook), one row per N,
# also to --out FILE. RSS: VmHWM (peak) and VmRSS from /proc/PID/status. Every process is stopped
# on exit; the work directory (logs, audit log, JSON results) is kept only with --keep.
#
#   --api-qps QPS      passed to syncguard reconcile (default: the binary's own, 20/s): the
#                      budget of the diagnosis' live reads, which bounds the sweeps
#   --sweep-timeout S  give up waiting for one replica's sweep/audit after S s (1800); the row
#                      then says so
#
# SYNCGUARD_BIN=PATH runs that binary (no build); .ci/run does so at --sizes 200 as a smoke test.
# Needs: curl, openssl, python3 (standard library only), cargo unless --skip-build.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZES=1000,5000,10000
RESOURCES=50
NAMESPACES=5
DEST_NAMESPACES=20
LIVE_SHARE=0.02
REVIEWS=2000
FLIP_ROUNDS=3
LOOP_SYNCS=2
API_QPS=""
SWEEP_TIMEOUT=1800
THREADS=12
BUILD=1
KEEP=0
OUT=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) SIZES=$2; shift 2 ;;
    --resources) RESOURCES=$2; shift 2 ;;
    --namespaces) NAMESPACES=$2; shift 2 ;;
    --dest-namespaces) DEST_NAMESPACES=$2; shift 2 ;;
    --live-share) LIVE_SHARE=$2; shift 2 ;;
    --reviews) REVIEWS=$2; shift 2 ;;
    --flip-rounds) FLIP_ROUNDS=$2; shift 2 ;;
    --loop-syncs) LOOP_SYNCS=$2; shift 2 ;;
    --api-qps) API_QPS=$2; shift 2 ;;
    --sweep-timeout) SWEEP_TIMEOUT=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --skip-build) BUILD=0; shift ;;
    --keep) KEEP=1; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,55p' "$0"; exit 0 ;;
    *) echo "scale.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "[scale] $(date +%H:%M:%S) $*" >&2; }
die() { echo "scale.sh: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

for tool in curl openssl python3 awk; do
  command -v "$tool" >/dev/null || die "$tool is required"
done

# shellcheck source=../tests/e2e/control-plane.sh
source "$ROOT/tests/e2e/control-plane.sh"
GEN=(python3 "$ROOT/bench/scale_gen.py")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/syncguard-scale.XXXXXX")
PIDS=()        # syncguard processes this script started (stopped by pid on exit)
FAILED=1
cleanup() {
  local pid
  for pid in ${PIDS[@]+"${PIDS[@]}"}; do cp_stop_pid "$pid" syncguard; done
  cp_stop
  if [[ $KEEP -eq 1 ]]; then
    log "work directory kept: $WORK"
  elif [[ $FAILED -eq 1 ]]; then
    log "failed; logs were in $WORK (removed; run with --keep to keep them)"
    rm -rf "$WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the binary ------------------------------------------------------------------------------
# SYNCGUARD_BIN: use that binary instead (CI's smoke run uses the debug build the e2e made).
SYNCGUARD_SRC="${SYNCGUARD_BIN:-$ROOT/target/release/syncguard}"
[[ -n ${SYNCGUARD_BIN:-} ]] && BUILD=0
if [[ $BUILD -eq 1 ]]; then
  log "building syncguard (release)"
  (cd "$ROOT" && cargo build --release --locked --bin syncguard -q)
fi
[[ -x $SYNCGUARD_SRC ]] || die "$SYNCGUARD_SRC missing (run without --skip-build)"
# Keep this run's binary: another build may replace target/release/syncguard meanwhile.
mkdir -p "$WORK/bin"
ln -f "$SYNCGUARD_SRC" "$WORK/bin/syncguard" 2>/dev/null || cp "$SYNCGUARD_SRC" "$WORK/bin/syncguard"
SG="$WORK/bin/syncguard"
"$SG" certs --out "$WORK/certs" --dns 127.0.0.1 --dns localhost >"$WORK/certs.log" 2>&1 ||
  { cat "$WORK/certs.log" >&2; die "syncguard certs failed"; }

QPS_ARGS=()
[[ -z $API_QPS ]] || QPS_ARGS=(--api-qps "$API_QPS")

# --- helpers ---------------------------------------------------------------------------------

# The audit policy: every request of syncguard's three identities at Metadata level (one entry
# per stage; the summary counts each auditID once), nothing else (the generator's writes would
# dwarf them).
audit_policy() {
  cat >"$1" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: [syncguard-rec-a, syncguard-rec-b, syncguard-webhook]
  - level: None
EOF
}

status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

wait_http() { # URL PID WHAT TIMEOUT
  local deadline=$((SECONDS + $4))
  until curl -fsS "$1" >/dev/null 2>&1; do
    kill -0 "$2" 2>/dev/null || die "$3 exited (see its log)"
    ((SECONDS < deadline)) || die "$3 not ready after $4 s"
    sleep 0.1
  done
}

# rec_spawn NAME KUBECONFIG: starts `syncguard reconcile` as replica NAME; sets REC_PID, REC_PORT.
rec_spawn() {
  local name=$1 kc=$2
  REC_PORT=$(cp_free_port)
  KUBECONFIG="$kc" SYNCGUARD_LOG="${SYNCGUARD_LOG:-info}" "$SG" reconcile \
    --probe-listen "127.0.0.1:$REC_PORT" --log-format json \
    --lease-namespace syncguard --identity "syncguard-rec-$name" \
    --audit-interval 1h --loop-syncs "$LOOP_SYNCS" ${QPS_ARGS[@]+"${QPS_ARGS[@]}"} \
    >>"$D/logs/reconcile-$name.log" 2>&1 &
  REC_PID=$!
  PIDS+=("$REC_PID")
}

stop_pid() { # PID NAME: SIGTERM, wait, prints seconds until it exited
  local pid=$1 t0 rc=0
  t0=$(now)
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || rc=$?
  [[ $rc -eq 0 ]] || log "$2 exited $rc after SIGTERM"
  since "$t0"
}

meta() { echo "$1=$2" >>"$D/meta.env"; }

# --- one size --------------------------------------------------------------------------------
run_size() {
  local n=$1
  T_SIZE=$SECONDS
  D="$WORK/n$n"
  mkdir -p "$D/logs"
  meta N "$n"; meta R "$RESOURCES"
  log "=== N=$n Applications × $RESOURCES resources"

  audit_policy "$D/audit-policy.yaml"
  CP_APISERVER_EXTRA_ARGS=(
    --audit-policy-file "$D/audit-policy.yaml" --audit-log-path "$D/audit.log"
    --audit-log-format json --audit-log-mode blocking --audit-log-maxsize 2000
  )
  cp_start "$D/cp"
  cp_apply_crds "$ROOT"/tests/e2e/crds/*.yaml
  local kc_a kc_b kc_w
  kc_a=$(cp_kubeconfig rec-a syncguard-rec-a system:masters)
  kc_b=$(cp_kubeconfig rec-b syncguard-rec-b system:masters)
  kc_w=$(cp_kubeconfig webhook syncguard-webhook system:masters)
  local K=(--server "$CP_APISERVER_URL" --ca "$CP_DIR/pki/ca.crt" --cert "$CP_DIR/pki/admin.crt"
           --key "$CP_DIR/pki/admin.key" --threads "$THREADS")

  # 1-2. Applications and live objects.
  "${GEN[@]}" plan --count "$n" --resources "$RESOURCES" --namespaces "$NAMESPACES" \
    --dest-namespaces "$DEST_NAMESPACES" --live-share "$LIVE_SHARE" \
    --out "$D/plan.json" --summary "$D/plan-summary.json"
  "${GEN[@]}" create "${K[@]}" --plan "$D/plan.json" --out "$D/create.json"
  "${GEN[@]}" live "${K[@]}" --plan "$D/plan.json" --out "$D/live.json"

  # 3. Replica a: start-up, Lease, sweep, one audit pass.
  local t_a a_pid a_port
  t_a=$(now)
  meta T_A "$t_a"
  rec_spawn a "$kc_a"
  a_pid=$REC_PID a_port=$REC_PORT
  log "reconciler a: pid $a_pid, metrics http://127.0.0.1:$a_port/metrics"
  "${GEN[@]}" follow --metrics "http://127.0.0.1:$a_port/metrics" --pid "$a_pid" --t0 "$t_a" --n "$n" \
    --want ready,leader,reach,sweep,audit --timeout "$SWEEP_TIMEOUT" --allow-timeout --out "$D/rec-a.json"
  sleep 3
  meta A_HWM_STEADY "$(status_kib "$a_pid" VmHWM)"; meta A_RSS_STEADY "$(status_kib "$a_pid" VmRSS)"
  meta A_START_END "$(now)"

  # SG502: flip the flip apps, each wave reconciled by a before the next.
  "${GEN[@]}" flip "${K[@]}" --plan "$D/plan.json" --metrics "http://127.0.0.1:$a_port/metrics" \
    --rounds "$FLIP_ROUNDS" --out "$D/flip.json"
  sleep 2   # the last Events and the loop state write

  # Replica b as standby, then the hand-over.
  local t_b b_pid b_port t_term follow_pid
  t_b=$(now)
  rec_spawn b "$kc_b"
  b_pid=$REC_PID b_port=$REC_PORT
  "${GEN[@]}" follow --metrics "http://127.0.0.1:$b_port/metrics" --pid "$b_pid" --t0 "$t_b" --n "$n" \
    --want ready,quiet --timeout "$SWEEP_TIMEOUT" --allow-timeout --out "$D/rec-b-standby.json"
  t_term=$(now)
  meta T_TERM "$t_term"
  kill -TERM "$a_pid"
  "${GEN[@]}" follow --metrics "http://127.0.0.1:$b_port/metrics" --pid "$b_pid" --t0 "$t_term" --n "$n" --base-now \
    --want leader,sweep,audit --timeout "$SWEEP_TIMEOUT" --allow-timeout --out "$D/rec-b.json" &
  follow_pid=$!
  local rc=0
  wait "$a_pid" || rc=$?
  meta A_STOP_S "$(since "$t_term")"
  [[ $rc -eq 0 ]] || log "reconciler a exited $rc after SIGTERM"
  wait "$follow_pid"
  meta B_END "$(now)"
  sleep 2
  meta B_HWM "$(status_kib "$b_pid" VmHWM)"; meta B_RSS "$(status_kib "$b_pid" VmRSS)"
  stop_pid "$b_pid" "reconciler b" >/dev/null

  "${GEN[@]}" events "${K[@]}" --out "$D/events.json"
  "${GEN[@]}" reports "${K[@]}" --out "$D/reports.json"

  # 4. The webhook with the Application cache.
  local w_port w_probe t_w w_pid
  w_port=$(cp_free_port); w_probe=$(cp_free_port)
  t_w=$(now)
  KUBECONFIG="$kc_w" SYNCGUARD_LOG="info,syncguard::webhook::service=debug" "$SG" serve --cluster \
    --cert-dir "$WORK/certs" --listen "127.0.0.1:$w_port" --probe-listen "127.0.0.1:$w_probe" \
    --log-format json >>"$D/logs/serve.log" 2>&1 &
  w_pid=$!
  PIDS+=("$w_pid")
  meta W_START "$t_w"
  meta W_SYNC_S "$("${GEN[@]}" wait-log --file "$D/logs/serve.log" --pattern 'application cache synced' \
    --t0 "$t_w" --timeout "$SWEEP_TIMEOUT" --line-out "$D/serve-synced.log")"
  meta W_HWM_SYNC "$(status_kib "$w_pid" VmHWM)"; meta W_RSS_SYNC "$(status_kib "$w_pid" VmRSS)"
  wait_http "http://127.0.0.1:$w_probe/readyz" "$w_pid" "syncguard serve" 60
  sleep 1  # the index rebuild after the first list settles (0.5 s debounce)
  "${GEN[@]}" review --url "https://127.0.0.1:$w_port/validate" --cacert "$WORK/certs/ca.crt" --pid "$w_pid" \
    --plan "$D/plan.json" --count "$REVIEWS" --out "$D/review.json"
  sleep 1
  meta W_HWM_END "$(status_kib "$w_pid" VmHWM)"; meta W_RSS_END "$(status_kib "$w_pid" VmRSS)"
  "${GEN[@]}" elapsed --log "$D/logs/serve.log" \
    --uid-prefix "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["uid_prefix"])' "$D/review.json")" \
    --out "$D/elapsed.json"
  stop_pid "$w_pid" "syncguard serve" >/dev/null
  local t_end
  t_end=$(now)

  # The control plane's own footprint, for context.
  meta APISERVER_HWM "$(status_kib "$CP_APISERVER_PID" VmHWM)"
  meta ETCD_HWM "$(status_kib "$CP_ETCD_PID" VmHWM)"

  # 5. The audit log, by phase.
  # shellcheck disable=SC1090
  source "$D/meta.env"
  local a_end
  a_end=$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); print(max(list(a["abs"].values()) + [float(sys.argv[2])]))' \
    "$D/rec-a.json" "$(awk -F= '$1 == "A_START_END" { print $2 }' "$D/meta.env")")
  local fstart fend
  read -r fstart fend < <(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print(f["start"], f["end"])' "$D/flip.json")
  "${GEN[@]}" audit --log "$D/audit.log" --users syncguard-rec-a,syncguard-rec-b,syncguard-webhook \
    --phase "start:$t_a:$a_end" --phase "flip:$fstart:$fend" --phase "standby:$t_b:$t_term" \
    --phase "handover:$t_term:$B_END" --phase "webhook:$t_w:$t_end" --out "$D/audit.json"

  cp_stop
  meta WALL_S "$((SECONDS - T_SIZE))"
  log "=== N=$n done in $((SECONDS - T_SIZE)) s"
}

STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
DIRS=()
IFS=, read -r -a SIZE_LIST <<<"$SIZES"
for n in "${SIZE_LIST[@]}"; do
  run_size "$n"
  DIRS+=("$D")
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

report() {
  echo "### Scale run of $STARTED"
  echo
  echo "- machine: $(nproc --all) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); load average before $LOAD_BEFORE, after $LOAD_AFTER"
  echo "- syncguard $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' + uncommitted changes'), kube-apiserver $("$KUBE_APISERVER" --version | awk '{print $2}'), fresh etcd + kube-apiserver per size"
  echo "- $RESOURCES resources per Application, Applications in $NAMESPACES namespaces, destinations in $DEST_NAMESPACES; ~3 % stuck, ~3 % flipping ($FLIP_ROUNDS rounds, --loop-syncs $LOOP_SYNCS), live objects for --live-share $LIVE_SHARE"
  echo "- reconcile: --audit-interval 1h (one pass, on winning the Lease), api-qps ${API_QPS:-default}; times in seconds from spawn (hand-over: from SIGTERM to a)"
  local d
  for d in "${DIRS[@]}"; do
    echo "- N=$(awk -F= '$1 == "N" { print $2 }' "$d/meta.env"): run $(awk -F= '$1 == "WALL_S" { print $2 }' "$d/meta.env") s; kube-apiserver VmHWM $(awk -F= '$1 == "APISERVER_HWM" { printf "%.0f MiB", $2 / 1024 }' "$d/meta.env"), etcd $(awk -F= '$1 == "ETCD_HWM" { printf "%.0f MiB", $2 / 1024 }' "$d/meta.env")"
  done
  echo
  "${GEN[@]}" table "${DIRS[@]}"
}

report | tee "${OUT:-/dev/null}"
FAILED=0
