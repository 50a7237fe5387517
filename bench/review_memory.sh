#!/usr/bin/env bash
# Memory per review: the peak RSS of `syncguard serve` for one AdmissionReview of a given object
# size, and for several at once. Whole process, a fresh server per measurement, so each peak
# belongs to one size.
#
#   bench/review_memory.sh [--sizes "0.1 0.5 1 2 2.7 3 5"] [--cases "crd:CREATE ..."]
#                          [--concurrent N] [--concurrent-from MIB]
#                          [--workers N] [--binary LABEL=PATH]... [--serve-args "..."]
#                          [--skip-build] [--keep] [--out FILE]
#
# Per case (kind:operation) and object size (MiB of `object` as compact JSON; an UPDATE carries
# the object twice, as `object` and `oldObject`): bench/review_gen.py writes the AdmissionReview
# (a CustomResourceDefinition with a large openAPIV3Schema and its server-side-apply
# managedFields, or a ConfigMap with large data values). For each binary: start `syncguard
# serve` (TLS on loopback, built-in rules, no app context), wait for /readyz, read VmRSS
# (idle), POST the review once to /validate with curl, read VmHWM (peak) and VmRSS (after) from
# /proc/PID/status, stop it. For sizes from --concurrent-from MiB on, a second fresh server gets
# --concurrent copies of the review at once (one connection each) and its VmHWM is read.
# Prints a markdown table (also to --out).
#
#   --sizes "…"          object sizes in MiB (0.1 0.5 1 2 2.7 3 5)
#   --cases "…"          kind:OPERATION[:ctx] (crd:CREATE crd:UPDATE configmap:CREATE
#                        crd:UPDATE:ctx); ctx: serve --app-context with the CRD's Application
#                        (its previous version and four other 1 MiB CRDs, bench/review_gen.py)
#   --concurrent N       reviews at once for the large sizes (4; 0 to skip)
#   --concurrent-from M  smallest size (MiB) that also gets the concurrent run (2)
#   --workers N          serve --workers for the concurrent run (4, so all N are evaluated at
#                        once, as on a node with that many CPUs; 0: serve's default)
#   --binary LABEL=PATH  a syncguard binary to measure (repeatable; runs side by side, same
#                        reviews; default: syncguard=target/release/syncguard, built first)
#   --serve-args "…"     extra flags for every `syncguard serve`
#   --skip-build         do not build   --keep   keep the temp dir (reviews, logs)
#
# Needs: cargo (unless --skip-build), curl, python3, awk. Sends traffic to 127.0.0.1 only.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZES="0.1 0.5 1 2 2.7 3 5"
CASES="crd:CREATE crd:UPDATE configmap:CREATE crd:UPDATE:ctx"
CONCURRENT=4
CONCURRENT_FROM=2
WORKERS=4
BINARIES=()
SERVE_ARGS=""
BUILD=1
KEEP=0
OUT=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) SIZES=$2; shift 2 ;;
    --cases) CASES=$2; shift 2 ;;
    --concurrent) CONCURRENT=$2; shift 2 ;;
    --concurrent-from) CONCURRENT_FROM=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --binary) BINARIES+=("$2"); shift 2 ;;
    --serve-args) SERVE_ARGS=$2; shift 2 ;;
    --skip-build) BUILD=0; shift ;;
    --keep) KEEP=1; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "review_memory.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "[review_memory] $*" >&2; }
die() { echo "review_memory.sh: $*" >&2; exit 1; }
for tool in curl python3 awk; do command -v "$tool" >/dev/null || die "$tool is missing"; done

if [[ ${#BINARIES[@]} -eq 0 ]]; then
  if [[ $BUILD -eq 1 ]]; then
    log "building syncguard (release)"
    (cd "$ROOT" && cargo build --release --locked --bin syncguard -q)
  fi
  BINARIES=("syncguard=$ROOT/target/release/syncguard")
fi
for b in "${BINARIES[@]}"; do
  [[ $b == *=* ]] || die "--binary wants LABEL=PATH, got $b"
  [[ -x ${b#*=} ]] || die "${b#*=} is not an executable"
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/review_memory.XXXXXX")
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
"${BINARIES[0]#*=}" certs --out "$CERTS" --dns localhost --dns 127.0.0.1 --days 2 >/dev/null
CA="$CERTS/ca.crt"

free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 30000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  die "no free port found"
}
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }
now_ns() { date +%s%N; }

# start_server BINARY NAME [extra flags...]: sets SERVER_PID and PORT once /readyz answers 200.
start_server() {
  local bin=$1 name=$2
  shift 2
  PORT=$(free_port)
  # shellcheck disable=SC2086
  "$bin" serve --listen "127.0.0.1:$PORT" --cert-dir "$CERTS" --log-format json \
    --eval-timeout-ms 30000 "$@" $SERVE_ARGS >"$WORK/$name.stdout" 2>"$WORK/$name.log" &
  SERVER_PID=$!
  local deadline=$(( $(now_ns) + 30000000000 ))
  until curl -s -o /dev/null --max-time 1 --cacert "$CA" -w '%{http_code}' \
      "https://127.0.0.1:$PORT/readyz" 2>/dev/null | grep -qx 200; do
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/$name.log" >&2; die "$name exited before it was ready"; }
    [[ $(now_ns) -lt $deadline ]] || die "$name not ready after 30 s"
    sleep 0.05
  done
}

stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# post FILE OUT: one review to /validate; prints "HTTP_CODE SECONDS".
post() {
  curl -s -o "$2" --cacert "$CA" -H 'content-type: application/json' \
    -w '%{http_code} %{time_total}\n' --data-binary "@$1" "https://127.0.0.1:$PORT/validate"
}

# The verdict of an answer: allowed/denied, and the first warning (shortened) if any.
verdict() {
  local code=$1 file=$2
  if [[ $code != 200 ]]; then echo "HTTP $code"; return; fi
  python3 - "$file" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["response"]
out = "allowed" if r.get("allowed") else "denied"
w = r.get("warnings") or []
if w:
    first = w[0] if len(w[0]) <= 70 else w[0][:67] + "..."
    out += f" + {len(w)} warning(s): \"{first}\""
print(out)
EOF
}

ROWS=()
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)

for case in $CASES; do
  IFS=: read -r kind op ctx <<<"$case"
  for size in $SIZES; do
    bytes=$(awk -v s="$size" 'BEGIN { printf "%d", s * 1048576 }')
    review="$WORK/$kind-$op-$size.json"
    read -r obj_bytes body_bytes < <(python3 "$ROOT/bench/review_gen.py" "$kind" "$op" "$bytes" "$review")
    context=()
    shown=$kind
    if [[ $ctx == ctx ]]; then
      [[ $kind == crd ]] || die "$case: only crd reviews have a context"
      python3 "$ROOT/bench/review_gen.py" context "$bytes" "$WORK/ctx-$size"
      context=(--app-context "$WORK/ctx-$size")
      shown="crd in app"
    fi
    for b in "${BINARIES[@]}"; do
      label=${b%%=*}; bin=${b#*=}
      name="$label-$kind-$op-$size${ctx:+-$ctx}"
      start_server "$bin" "$name" "${context[@]}"
      idle=$(status_kib "$SERVER_PID" VmRSS)
      read -r code secs < <(post "$review" "$WORK/$name.answer")
      hwm=$(status_kib "$SERVER_PID" VmHWM); after=$(status_kib "$SERVER_PID" VmRSS)
      stop_server
      v=$(verdict "$code" "$WORK/$name.answer")
      conc="–"
      if [[ $CONCURRENT -gt 0 ]] && awk -v s="$size" -v f="$CONCURRENT_FROM" 'BEGIN { exit !(s >= f) }'; then
        workers=()
        [[ $WORKERS -gt 0 ]] && workers=(--workers "$WORKERS")
        start_server "$bin" "$name-x$CONCURRENT" "${workers[@]}" "${context[@]}"
        pids=()
        for i in $(seq 1 "$CONCURRENT"); do
          post "$review" "$WORK/$name-x$CONCURRENT-$i.answer" >"$WORK/$name-x$CONCURRENT-$i.code" &
          pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p"; done
        chwm=$(status_kib "$SERVER_PID" VmHWM)
        stop_server
        codes=$(cat "$WORK/$name-x$CONCURRENT"-*.code | awk '{ print $1 }' | sort | uniq -c | awk '{ printf "%s%s×%s", sep, $1, $2; sep = " " }')
        conc="$(mib "$chwm") ($codes)"
      fi
      secs=$(awk -v s="$secs" 'BEGIN { printf "%.2f s", s }')
      ROWS+=("| $shown | $op | $(awk -v b="$obj_bytes" 'BEGIN { printf "%.2f MiB", b / 1048576 }') | $(awk -v b="$body_bytes" 'BEGIN { printf "%.2f MiB", b / 1048576 }') | $label | $(mib "$idle") | **$(mib "$hwm")** | $(mib "$after") | $secs | $v | $conc |")
      log "$kind $op $size MiB, $label: idle $(mib "$idle"), peak $(mib "$hwm"), after $(mib "$after"), $secs, $v; x$CONCURRENT: $conc"
    done
  done
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

report() {
  echo "### Run of $STARTED"
  echo
  echo "- machine: $(nproc --all) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)"
  echo "- load average (1/5/15 min) before: $LOAD_BEFORE; after: $LOAD_AFTER"
  echo "- binaries: $(for b in "${BINARIES[@]}"; do printf '%s ' "${b%%=*}"; done)($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?') tree)"
  echo "- serve: built-in rules, no app context (\"crd in app\": --app-context with the CRD's previous version and four other 1 MiB CRDs of its Application), --eval-timeout-ms 30000${SERVE_ARGS:+, $SERVE_ARGS}; concurrent runs with ${CONCURRENT} reviews at once$([[ $WORKERS -gt 0 ]] && echo ", --workers $WORKERS")"
  echo
  echo "| kind | op | object | body | binary | idle RSS | peak RSS (1 review) | RSS after | time | verdict | peak RSS ($CONCURRENT at once) |"
  echo "|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "peak RSS: VmHWM of the server process (fresh per measurement); time: curl's total, TLS included."
}

report | tee "${OUT:-/dev/null}"
