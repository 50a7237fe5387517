#!/usr/bin/env bash
# What a throwaway API server adds on the chart corpus (tests/fixtures/charts/, issue 34): runs
# `syncguard check --ephemeral-cluster` and the plain offline `syncguard check` on every render,
# with the policies and the per-render `check_args` of corpus.json that tests/chart_corpus.rs
# uses, and prints per render the findings that appear only with the server (rule, object,
# path, the first 160 characters of the message), those that only the offline run has, the
# `server` summary (accepted / refused / not checked), what the server run said on stderr
# (objects not checked, CRDs refused) and the load errors of both runs. Ends with the totals.
#
# Needs jq, the syncguard debug binary (SYNCGUARD_BIN overrides target/debug/syncguard; run
# `cargo build` first when it is older than your tree) and kube-apiserver + etcd
# (SYNCGUARD_KUBE_BINARIES, else .tools/bin; scripts/install-kube.sh builds them).
#
# Exit 0 when every run produced a JSON report (the server run one with its `server` summary), 1
# when one did not (named on stderr), 2 on usage errors or missing tools. With --strict (CI), a
# finding only one of the two runs has is a failure too: every finding the server adds on these
# charts was judged false once (the README's section on --ephemeral-cluster) and the model
# fixed, so a new one must be judged before it lands.
#
#   scripts/chart-corpus-ephemeral.sh                       # every render
#   scripts/chart-corpus-ephemeral.sh grafana vault         # only these render ids
#   scripts/chart-corpus-ephemeral.sh --keep /tmp/reports   # also keep <id>.{offline,server}.json/.stderr
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS="$ROOT/tests/fixtures/charts"
SG="${SYNCGUARD_BIN:-$ROOT/target/debug/syncguard}"
KUBE_BIN="${SYNCGUARD_KUBE_BINARIES:-$ROOT/.tools/bin}"

usage() {
    cat <<'EOF'
Usage: scripts/chart-corpus-ephemeral.sh [--strict] [--keep DIR] [RENDER_ID ...]
EOF
}

KEEP=""
STRICT=0
IDS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --keep)
            [[ $# -ge 2 ]] || { usage >&2; exit 2; }
            KEEP="$2"
            shift 2
            ;;
        --strict) STRICT=1; shift ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; exit 2 ;;
        *) IDS+=("$1"); shift ;;
    esac
done

command -v jq >/dev/null || { echo "chart-corpus-ephemeral: jq is missing" >&2; exit 2; }
[[ -x "$SG" ]] || { echo "chart-corpus-ephemeral: no syncguard binary at $SG (cargo build)" >&2; exit 2; }
if [[ ! -x "$KUBE_BIN/kube-apiserver" || ! -x "$KUBE_BIN/etcd" ]]; then
    echo "chart-corpus-ephemeral: no kube-apiserver + etcd in $KUBE_BIN (scripts/install-kube.sh)" >&2
    exit 2
fi
if [[ ${#IDS[@]} -eq 0 ]]; then
    mapfile -t IDS < <(jq -r '.[].id' "$CORPUS/corpus.json")
fi
[[ -n "$KEEP" ]] && mkdir -p "$KEEP"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# One line per open finding: rule <TAB> Kind ns/name <TAB> path <TAB> message (as the corpus test keys them).
FINDINGS='.findings[]? | select(.status != "skipped")
    | [ .rule_id,
        ((.resource.kind // "") + " " + (if .resource.namespace then .resource.namespace + "/" else "" end) + (.resource.name // "")),
        (.path // "-"),
        ((.message // "") | gsub("\\s+"; " ") | .[0:160]) ] | @tsv'

failed=()
total_only=0
total_gone=0
declare -A sum=([accepted]=0 [refused]=0 [not_checked]=0)
declare -A by_rule=()

for id in "${IDS[@]}"; do
    gz="$CORPUS/renders/$id.yaml.gz"
    if [[ ! -f "$gz" ]]; then
        echo "chart-corpus-ephemeral: no render $id" >&2
        failed+=("$id")
        continue
    fi
    dir="$WORK/$id"
    mkdir -p "$dir"
    gunzip -c "$gz" >"$dir/$id.yaml"
    mapfile -t extra < <(jq -r --arg id "$id" '.[] | select(.id == $id) | .check_args // [] | .[]' "$CORPUS/corpus.json")
    common=("$dir/$id.yaml" --policies "$ROOT/policies" --format json --color never "${extra[@]}")

    # Exit 0/1 are reports; 2 still prints one when the server or an input failed: judged below.
    "$SG" check "${common[@]}" >"$dir/offline.json" 2>"$dir/offline.stderr" || true
    "$SG" check --ephemeral-cluster --kube-binaries "$KUBE_BIN" "${common[@]}" \
        >"$dir/server.json" 2>"$dir/server.stderr" || true
    if [[ -n "$KEEP" ]]; then
        for f in offline.json offline.stderr server.json server.stderr; do
            cp "$dir/$f" "$KEEP/$id.$f"
        done
    fi

    echo "== $id"
    ok=1
    for run in offline server; do
        if [[ ! -s "$dir/$run.json" ]] ||
            ! jq -e 'type == "object" and has("findings")' "$dir/$run.json" >/dev/null 2>&1; then
            echo "   $run run produced no JSON report:"
            sed 's/^/      /' "$dir/$run.stderr" | tail -n 5
            ok=0
        fi
    done
    if [[ $ok -eq 0 ]]; then
        failed+=("$id")
        continue
    fi

    jq -r "$FINDINGS" "$dir/offline.json" | sort >"$dir/offline.tsv"
    jq -r "$FINDINGS" "$dir/server.json" | sort >"$dir/server.tsv"
    # Keyed without the message: a finding whose wording changes with the server is not new.
    cut -f1-3 "$dir/offline.tsv" | sort -u >"$dir/offline.keys"
    cut -f1-3 "$dir/server.tsv" | sort -u >"$dir/server.keys"
    awk -F'\t' 'NR == FNR { seen[$1 FS $2 FS $3] = 1; next } !(($1 FS $2 FS $3) in seen)' \
        "$dir/offline.keys" "$dir/server.tsv" >"$dir/only-server.tsv"
    awk -F'\t' 'NR == FNR { seen[$1 FS $2 FS $3] = 1; next } !(($1 FS $2 FS $3) in seen)' \
        "$dir/server.keys" "$dir/offline.tsv" >"$dir/only-offline.tsv"

    jq -r '.server | if . == null then "   server: none (the server did not judge this run)"
        else "   server: \(.kubernetes // "?"): \(.accepted) accepted, \(.refused) refused, \(.not_checked) not checked" end' \
        "$dir/server.json"
    # A report without the server's judgement (it could not start) measures nothing here.
    if ! jq -e '.server != null' "$dir/server.json" >/dev/null; then
        failed+=("$id")
    fi
    for k in accepted refused not_checked; do
        v="$(jq -r ".server.$k // 0" "$dir/server.json")"
        sum[$k]=$((sum[$k] + v))
    done

    n_only="$(wc -l <"$dir/only-server.tsv")"
    n_gone="$(wc -l <"$dir/only-offline.tsv")"
    total_only=$((total_only + n_only))
    total_gone=$((total_gone + n_gone))
    echo "   only with the server: $n_only"
    while IFS=$'\t' read -r rule obj path msg; do
        printf '     %s  %s  %s\n        %s\n' "$rule" "$obj" "$path" "$msg"
        by_rule[$rule]=$((${by_rule[$rule]:-0} + 1))
    done <"$dir/only-server.tsv"
    if [[ $n_gone -gt 0 ]]; then
        echo "   only offline (gone with the server): $n_gone"
        while IFS=$'\t' read -r rule obj path msg; do
            printf '     %s  %s  %s\n        %s\n' "$rule" "$obj" "$path" "$msg"
        done <"$dir/only-offline.tsv"
    fi

    for run in offline server; do
        jq -r --arg run "$run" '.errors[]? | "   error (\($run)): \(tostring | .[0:300])"' "$dir/$run.json"
    done
    # The server run names on stderr what it could not dry-run and which CRDs it refused.
    grep -v -E '^syncguard: throwaway API server .* ready in' "$dir/server.stderr" \
        | sed 's/^/   stderr (server): /' | cut -c1-300 || true
done

echo
echo "== totals: ${#IDS[@]} renders; server: ${sum[accepted]} accepted, ${sum[refused]} refused, ${sum[not_checked]} not checked"
echo "   findings only with the server: $total_only; only offline: $total_gone"
for rule in $(printf '%s\n' "${!by_rule[@]}" | sort); do
    echo "     $rule: ${by_rule[$rule]}"
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "chart-corpus-ephemeral: no JSON report (or no server summary) for: ${failed[*]}" >&2
    exit 1
fi
if [[ $STRICT -eq 1 && ($total_only -gt 0 || $total_gone -gt 0) ]]; then
    echo "chart-corpus-ephemeral: $total_only finding(s) only with the server and $total_gone only offline; judge them (tests/fixtures/charts/README.md) and fix the model" >&2
    exit 1
fi
