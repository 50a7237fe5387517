#!/usr/bin/env bash
# Webhook load benchmark: `syncguard serve` (/validate and /mutate) against the floor server
# (same axum + axum-server/rustls stack, parse the review and answer allowed) in one run, over
# HTTPS keep-alive with wrk and a round-robin mix of recorded AdmissionReviews.
#
#   bench/webhook_load.sh [--duration S] [--warmup S] [--threads N] [--connections N]
#                         [--no-unpinned] [--no-light] [--per-review] [--skip-build] [--keep]
#                         [--out FILE] [--syncguard BIN] [--app-objects N]
#
# Per target: start the server (pinned to CPU 0 with taskset, or unpinned), time it to its TLS
# port accepting connections and to the first 200 from GET /readyz over HTTPS, check every review
# once with curl, warm up with wrk, scrape /metrics, run wrk (on CPU 1) with --latency, scrape
# /metrics again, read the server's peak RSS (VmHWM) and CPU time from /proc, stop it. Prints a
# markdown table (also to --out). See BENCHMARKS.md ("Webhook") for the method and recorded results.
#
#   --duration S      measured seconds per target (20)       --warmup S   warm-up seconds (5)
#   --threads N       wrk threads (2)                        --connections N   wrk connections (32)
#   --no-unpinned     skip the unpinned repeat of the three saturated targets
#   --no-light        skip the 1-connection (unloaded latency) runs
#   --per-review      also run /validate with one review kind at a time (1 connection, pinned)
#   --ready-runs N    start each server N more times without load, pinned, for the start-up
#                     figures (min/median/max; 10, 0 to skip)
#   --skip-build      use the existing release binaries   --keep   keep the temp dir (logs, wrk output)
#   --syncguard BIN   measure this syncguard binary (e.g. one built from an earlier commit) instead
#                     of target/release/syncguard; it is not built
#   --app-objects N   add to the app context the Application `inventory` of the ConfigMap and
#                     Deployment reviews, with N more objects (bench/app_gen.py), to see how the
#                     cost of a review depends on the size of its Application
#
# Needs: cargo, curl, awk, taskset (util-linux), wrk (installed with apt-get when missing), 2 CPUs.
# Sends traffic to 127.0.0.1 only; every wrk run is bounded by --duration.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DURATION=20
WARMUP=5
THREADS=2
CONNECTIONS=32
UNPINNED=1
LIGHT=1
PER_REVIEW=0
READY_RUNS=10
BUILD=1
KEEP=0
OUT=""
SYNCGUARD_BIN=""
APP_OBJECTS=""
SERVER_CPU=0
CLIENT_CPU=1

while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) DURATION=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --no-unpinned) UNPINNED=0; shift ;;
    --no-light) LIGHT=0; shift ;;
    --per-review) PER_REVIEW=1; shift ;;
    --ready-runs) READY_RUNS=$2; shift 2 ;;
    --skip-build) BUILD=0; shift ;;
    --keep) KEEP=1; shift ;;
    --out) OUT=$2; shift 2 ;;
    --syncguard) SYNCGUARD_BIN=$2; shift 2 ;;
    --app-objects) APP_OBJECTS=$2; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "webhook_load.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "[webhook_load] $*" >&2; }
die() { echo "webhook_load.sh: $*" >&2; exit 1; }

# --- tools -----------------------------------------------------------------------------------
need_apt() {
  local pkg=$1
  command -v apt-get >/dev/null || die "$pkg is missing and apt-get is not available"
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  log "installing $pkg with apt-get"
  if ! $sudo apt-get install -y -qq "$pkg" >/dev/null 2>&1; then
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq "$pkg" >/dev/null
  fi
}
command -v wrk >/dev/null || need_apt wrk
command -v taskset >/dev/null || need_apt util-linux
command -v curl >/dev/null || need_apt curl
[[ $(nproc --all) -ge 2 ]] || die "needs 2 CPUs (server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU)"

# --- build -----------------------------------------------------------------------------------
SYNCGUARD="${SYNCGUARD_BIN:-$ROOT/target/release/syncguard}"
FLOOR_TARGET="$ROOT/target/floor-server"
FLOOR="$FLOOR_TARGET/release/syncguard-floor-server"
if [[ $BUILD -eq 1 ]]; then
  if [[ -z $SYNCGUARD_BIN ]]; then
    log "building syncguard (release)"
    (cd "$ROOT" && cargo build --release --locked --bin syncguard -q)
  fi
  log "building the floor server (release)"
  cargo build --release --locked -q --manifest-path "$ROOT/bench/floor-server/Cargo.toml" \
    --target-dir "$FLOOR_TARGET"
fi
[[ -x $SYNCGUARD ]] || die "$SYNCGUARD missing (run without --skip-build)"
[[ -x $FLOOR ]] || die "$FLOOR missing (run without --skip-build)"

# From here on this shell and everything it starts (curl, wrk, the polling loops) run on the
# client CPU; servers are started with their own taskset.
taskset -cp "$CLIENT_CPU" $$ >/dev/null

WORK=$(mktemp -d "${TMPDIR:-/tmp}/webhook_load.XXXXXX")
SERVER_PID=""
cleanup() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ $KEEP -eq 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

CERTS="$WORK/certs"
"$SYNCGUARD" certs --out "$CERTS" --dns localhost --dns 127.0.0.1 --days 2 >/dev/null
CA="$CERTS/ca.crt"

FIX="$ROOT/tests/fixtures/admission"
# The mix: the seed incident's Job (denied with SG201 given its Application), an Argo CD hook Job
# without a deadline (mutated), a clean ConfigMap, a Deployment UPDATE (object + oldObject) and a
# Job DELETE (admitted without evaluation).
REVIEWS=(
  "$FIX/seed-job-create.json"
  "$FIX/hook-job-no-deadline.json"
  "$FIX/configmap-clean.json"
  "$FIX/deployment-update.json"
  "$FIX/job-delete.json"
)
APP_CONTEXT="$ROOT/examples/seed-incident"
if [[ -n $APP_OBJECTS ]]; then
  [[ $APP_OBJECTS =~ ^[0-9]+$ ]] || die "--app-objects wants a number, got $APP_OBJECTS"
  mkdir -p "$WORK/context"
  cp "$APP_CONTEXT"/*.yaml "$WORK/context/"
  python3 "$ROOT/bench/app_gen.py" "$APP_OBJECTS" "$WORK/context/inventory.json" >&2
  APP_CONTEXT="$WORK/context"
fi
LUA="$ROOT/bench/wrk/reviews.lua"

free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 30000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  die "no free port found"
}

now_ns() { date +%s%N; }

# Fields 14 and 15 of /proc/PID/stat: user and system CPU time of all threads, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# Starts a server; sets SERVER_PID, PORT, LISTEN_MS (spawn → the TLS port accepts a TCP
# connection; bash's /dev/tcp, polled back to back, ~0.05 ms a try) and READY_MS (spawn → first
# 200 from GET /readyz over HTTPS with curl; includes one curl run, ~10 ms on this machine).
# syncguard binds its listener only after policies, context and certificate are loaded and starts
# serving right after, so LISTEN_MS is the precise figure and READY_MS the conservative one.
start_server() {
  local kind=$1 pin=$2 name=$3
  PORT=$(free_port)
  local cmd
  if [[ $kind == floor ]]; then
    cmd=("$FLOOR" --listen "127.0.0.1:$PORT" --cert-dir "$CERTS")
  else
    cmd=("$SYNCGUARD" serve --listen "127.0.0.1:$PORT" --cert-dir "$CERTS"
         --app-context "$APP_CONTEXT" --log-format json)
  fi
  local cpus="$SERVER_CPU"
  [[ $pin == unpinned ]] && cpus="0-$(( $(nproc --all) - 1 ))"
  local t0 t1 t2
  t0=$(now_ns)
  taskset -c "$cpus" "${cmd[@]}" >"$WORK/$name.stdout" 2>"$WORK/$name.log" &
  SERVER_PID=$!
  local deadline=$(( t0 + 15000000000 ))
  until { exec 3<>"/dev/tcp/127.0.0.1/$PORT"; } 2>/dev/null; do
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/$name.log" >&2; die "$name exited before it was ready"; }
    [[ $(now_ns) -lt $deadline ]] || die "$name not listening after 15 s"
  done
  t1=$(now_ns)
  exec 3>&-
  until curl -s -o /dev/null --max-time 1 --cacert "$CA" -w '%{http_code}' \
      "https://127.0.0.1:$PORT/readyz" 2>/dev/null | grep -qx 200; do
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/$name.log" >&2; die "$name exited before it was ready"; }
    [[ $(now_ns) -lt $deadline ]] || die "$name not ready after 15 s"
  done
  t2=$(now_ns)
  LISTEN_MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
  READY_MS=$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.0f", (b - a) / 1e6 }')
}

stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# Every review once over HTTPS: must be 200 and an AdmissionReview answer for its uid.
smoke() {
  local path=$1 f code uid
  for f in "${MIX[@]}"; do
    code=$(curl -s -o "$WORK/smoke.json" -w '%{http_code}' --cacert "$CA" \
      -H 'content-type: application/json' --data-binary "@$f" "https://127.0.0.1:$PORT$path")
    [[ $code == 200 ]] || die "$path $(basename "$f"): HTTP $code: $(head -c 300 "$WORK/smoke.json")"
    uid=$(grep -o '"uid": *"[^"]*"' "$f" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')
    grep -q "\"uid\":\"$uid\"" "$WORK/smoke.json" || die "$path $(basename "$f"): answer lacks uid $uid"
  done
}

scrape() { curl -s --cacert "$CA" "https://127.0.0.1:$PORT/metrics" >"$1"; }

# p50/p99 of syncguard_evaluation_duration_seconds{endpoint=EP} from the bucket deltas of two
# scrapes, interpolated linearly inside the bucket (Prometheus' histogram_quantile), plus the
# share of evaluations at or under 1 ms (read straight off the 0.001 bucket) and the mean.
histogram_stats() {
  local before=$1 after=$2 ep=$3
  awk -v ep="$ep" '
    function parse(line,   le, v) {
      if (line !~ /^syncguard_evaluation_duration_seconds_bucket\{/) return ""
      if (line !~ ("endpoint=\"" ep "\"")) return ""
      le = line; sub(/.*le="/, "", le); sub(/".*/, "", le)
      return le
    }
    FNR == 1 { file++ }
    {
      if ($0 ~ /^syncguard_evaluation_duration_seconds_(sum|count)\{/ && $0 ~ ("endpoint=\"" ep "\"")) {
        key = ($0 ~ /_sum\{/) ? "sum" : "count"
        val = $NF
        if (file == 1) base[key] = val; else top[key] = val
        next
      }
      le = parse($0)
      if (le == "") next
      if (file == 1) b[le] = $NF
      else { a[le] = $NF; if (!(le in seen)) { seen[le] = 1; order[n++] = le } }
    }
    END {
      total = (a["+Inf"] - b["+Inf"])
      if (total <= 0) { print "0 - - - -"; exit }
      mean = (top["sum"] - base["sum"]) / (top["count"] - base["count"])
      le1 = (("0.001" in a) ? (a["0.001"] - b["0.001"]) : -1)
      split("0.5 0.99", qs, " ")
      out = ""
      for (qi = 1; qi <= 2; qi++) {
        rank = qs[qi] * total; prev = 0; prevc = 0; res = ""
        for (i = 0; i < n; i++) {
          le = order[i]; c = a[le] - b[le]
          if (c >= rank) {
            if (le == "+Inf") { res = ">" prev; break }
            res = prev + (le - prev) * ((c - prevc) > 0 ? (rank - prevc) / (c - prevc) : 1)
            break
          }
          prev = (le == "+Inf") ? prev : le; prevc = c
        }
        out = out " " res
      }
      printf "%d%s %.6f %.4f\n", total, out, mean, (le1 >= 0 ? le1 / total : -1)
    }' "$before" "$after"
}

# Turns a wrk latency like 1.23ms / 456.00us / 1.02s into microseconds.
to_us() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); print v + 0 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); print v * 1000 }
    else if (v ~ /m$/) { sub(/m$/, "", v); print v * 60e6 }
    else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1e6 }
    else print "?" }'
}

fmt_us() { awk -v u="$1" 'BEGIN { if (u == "?" || u == "") print "?"; else if (u >= 1000) printf "%.2f ms", u / 1000; else printf "%.0f µs", u }'; }
fmt_s() { awk -v s="$1" 'BEGIN { if (s == "-" || s == "") print "–"; else if (s ~ /^>/) { sub(/^>/, "", s); printf "> %.2f ms", s * 1000 } else if (s * 1e6 >= 1000) printf "%.2f ms", s * 1000; else printf "%.0f µs", s * 1e6 }'; }

ROWS=()
RAW="$WORK/raw.tsv"
: >"$RAW"

# One measurement: TARGET_KIND (syncguard|floor), ENDPOINT path, pinning, threads, connections.
measure() {
  local kind=$1 path=$2 pin=$3 threads=$4 conns=$5
  local label
  if [[ $kind == floor ]]; then label="floor $path"; else label="syncguard $path"; fi
  local name="$kind${path//\//-}-$pin-c$conns"
  if [[ -n $MIX_LABEL ]]; then label="$label ($MIX_LABEL only)"; name="$name-$MIX_LABEL"; fi
  log "$label, $pin, ${threads}t/${conns}c: starting"
  start_server "$kind" "$pin" "$name"
  smoke "$path"
  local url="https://127.0.0.1:$PORT$path"
  local wrk=(wrk -t"$threads" -c"$conns" --timeout 5s -s "$LUA")
  "${wrk[@]}" -d"${WARMUP}s" "$url" -- "${MIX[@]}" >"$WORK/$name.warmup" 2>&1
  [[ $kind == syncguard ]] && scrape "$WORK/$name.before"
  local c0 t0 c1 t1
  c0=$(cpu_ticks "$SERVER_PID"); t0=$(now_ns)
  "${wrk[@]}" -d"${DURATION}s" --latency "$url" -- "${MIX[@]}" >"$WORK/$name.wrk" 2>&1
  c1=$(cpu_ticks "$SERVER_PID"); t1=$(now_ns)
  [[ $kind == syncguard ]] && scrape "$WORK/$name.after"
  local hwm rss threads_n
  hwm=$(status_kib "$SERVER_PID" VmHWM); rss=$(status_kib "$SERVER_PID" VmRSS)
  threads_n=$(status_kib "$SERVER_PID" Threads)
  stop_server

  local w="$WORK/$name.wrk"
  local rps p50 p99 reqs non2xx sockerr
  rps=$(awk '/^Requests\/sec:/ { print $2 }' "$w")
  reqs=$(awk '/requests in/ { print $1 }' "$w")
  p50=$(to_us "$(awk '$1 == "50%" { print $2 }' "$w")")
  p99=$(to_us "$(awk '$1 == "99%" { print $2 }' "$w")")
  non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$w"); non2xx=${non2xx:-0}
  sockerr=$(awk '/Socket errors:/ { gsub(/,/, ""); print $4 + $6 + $8 + $10 }' "$w"); sockerr=${sockerr:-0}
  [[ -n $rps ]] || { cat "$w" >&2; die "$label: no wrk result"; }
  local hz cpu
  hz=$(getconf CLK_TCK)
  cpu=$(awk -v c="$(( c1 - c0 ))" -v hz="$hz" -v ns="$(( t1 - t0 ))" 'BEGIN { printf "%.0f%%", 100 * (c / hz) / (ns / 1e9) }')

  local evals="–" sp50="–" sp99="–" smean="–" le1="–"
  if [[ $kind == syncguard ]]; then
    local ep=${path#/}
    read -r evals sp50 sp99 smean le1 < <(histogram_stats "$WORK/$name.before" "$WORK/$name.after" "$ep")
    sp50=$(fmt_s "$sp50"); sp99=$(fmt_s "$sp99"); smean=$(fmt_s "$smean")
    if [[ $evals -gt 0 ]]; then
      le1=$(awk -v x="$le1" 'BEGIN { printf "%.2f%%", x * 100 }')
    else
      le1="– (none evaluated)"
    fi
  fi
  local pinlabel="CPU $SERVER_CPU"; [[ $pin == unpinned ]] && pinlabel="unpinned"
  ROWS+=("| $label | $pinlabel | ${threads}/${conns} | $(printf '%.0f' "$rps") | $(fmt_us "$p50") | $(fmt_us "$p99") | $sp50 | $sp99 | $smean | $le1 | $(awk -v k="$hwm" 'BEGIN { printf "%.1f MiB", k / 1024 }') | $cpu | $LISTEN_MS / $READY_MS ms | $(( non2xx + sockerr )) |")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$label" "$pin" "$conns" "$rps" "$reqs" "$p50" "$p99" "$evals" "$sp50" "$sp99" "$le1" \
    "$hwm" "$rss" "$cpu" "$LISTEN_MS/$READY_MS" "$(( non2xx + sockerr ))" >>"$RAW"
  log "$label, $pin, ${threads}t/${conns}c: $rps req/s, p99 $(fmt_us "$p99"), server p99 $sp99, VmHWM ${hwm} KiB, threads $threads_n, listening ${LISTEN_MS} ms, ready ${READY_MS} ms"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)

MIX=("${REVIEWS[@]}")
MIX_LABEL=""
for pin in pinned $([[ $UNPINNED -eq 1 ]] && echo unpinned); do
  measure syncguard /validate "$pin" "$THREADS" "$CONNECTIONS"
  measure syncguard /mutate "$pin" "$THREADS" "$CONNECTIONS"
  measure floor /validate "$pin" "$THREADS" "$CONNECTIONS"
done
if [[ $LIGHT -eq 1 ]]; then
  measure syncguard /validate pinned 1 1
  measure syncguard /mutate pinned 1 1
  measure floor /validate pinned 1 1
fi

if [[ $PER_REVIEW -eq 1 ]]; then
  # Diagnostic: one review kind at a time, one connection, pinned — where the time goes.
  for f in "${REVIEWS[@]}"; do
    MIX=("$f")
    MIX_LABEL=$(basename "$f" .json)
    measure syncguard /validate pinned 1 1
  done
  MIX=("${REVIEWS[@]}")
  MIX_LABEL=""
fi

# Start-up on its own: N fresh starts per server, pinned, nothing else running from this script.
READY_ROWS=()
# min / median / max of the arguments.
stats() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "%s / %s / %s", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
ready_series() {
  local kind=$1 listen=() ready=() i
  for i in $(seq 1 "$READY_RUNS"); do
    start_server "$kind" pinned "$kind-ready-$i"
    listen+=("$LISTEN_MS"); ready+=("$READY_MS")
    stop_server
  done
  READY_ROWS+=("| $kind | $READY_RUNS | $(stats "${listen[@]}") ms | $(stats "${ready[@]}") ms |")
  log "$kind start-up x$READY_RUNS: listening $(stats "${listen[@]}") ms, ready $(stats "${ready[@]}") ms (min/median/max)"
}
if [[ $READY_RUNS -gt 0 ]]; then
  ready_series syncguard
  ready_series floor
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

report() {
  echo "### Run of $STARTED"
  echo
  echo "- machine: $(nproc --all) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)"
  echo "- load average (1/5/15 min) before: $LOAD_BEFORE; after: $LOAD_AFTER"
  echo "- syncguard ${SYNCGUARD_BIN:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')}, $(rustc -V 2>/dev/null || echo rustc), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
  echo "- wrk on CPU $CLIENT_CPU, ${WARMUP} s warm-up then ${DURATION} s measured, HTTPS keep-alive (HTTP/1.1, TLS 1.3),"
  echo "  round-robin over: $(for f in "${REVIEWS[@]}"; do printf '%s ' "$(basename "$f" .json)"; done)"
  echo "- syncguard: built-in rules, --app-context examples/seed-incident${APP_OBJECTS:+ + Application inventory of $((APP_OBJECTS + 2)) objects (bench/app_gen.py)}, default flags (--log-format json to a file, level ${SYNCGUARD_LOG:-${RUST_LOG:-info}})"
  echo
  echo "| target | server CPUs | wrk threads/conns | reviews/s | wrk p50 | wrk p99 | server p50 | server p99 | server mean | evals ≤ 1 ms | peak RSS (VmHWM) | server CPU | listening / ready | errors |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${ROWS[@]}"
  echo
  if [[ ${#READY_ROWS[@]} -gt 0 ]]; then
    echo "Start-up, pinned to CPU $SERVER_CPU, no load (min / median / max):"
    echo
    echo "| server | starts | spawn → TLS port listening | spawn → first GET /readyz 200 (incl. one curl) |"
    echo "|---|---:|---:|---:|"
    printf '%s\n' "${READY_ROWS[@]}"
    echo
  fi
  echo "server p50/p99/mean: syncguard_evaluation_duration_seconds bucket deltas over the measured window"
  echo "(evaluated reviews only — the DELETE is admitted without evaluation; timed on the worker, the wait for a slot is syncguard_worker_wait_seconds)."
}

report | tee "${OUT:-/dev/null}"
if [[ $KEEP -eq 1 ]]; then cp "$RAW" "$WORK/raw.tsv.keep"; fi
