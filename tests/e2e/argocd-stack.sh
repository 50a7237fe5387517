#!/usr/bin/env bash
# The real Argo CD on the e2e control plane: kube-controller-manager, kube-scheduler, kwok (one
# fake node whose pods run, succeed, fail, crash-loop or hang on request), redis, Argo CD's
# repo-server and application-controller (the installed release, v3.6.1 by default; out of cluster as Argo CD's own Procfile runs
# them), Argo CD's CRDs and minimal config, the `default` AppProject, and a local bare git repo
# that Applications use as their `file://` source. Everything listens on loopback, except the
# application-controller's metrics port: Argo CD binds it on 0.0.0.0 and has no flag to change
# that, so it gets a free random port.
#
#   source tests/e2e/control-plane.sh; source tests/e2e/argocd-stack.sh
#   as_start DIR     # after cp_start DIR (the audit policy must be set before: as_audit_args)
#   as_stop          # idempotent; stops what as_start started (the control plane is cp_stop's)
#   tests/e2e/argocd-stack.sh up    # the whole stack by hand; prints KUBECONFIG, waits for ^C
#
# Binaries from .tools/bin (scripts/install-kube.sh, scripts/install-argocd.sh); Argo CD's CRDs,
# default config maps and kwok's node stages are read from the Go module cache, where
# install-argocd.sh left those modules. Logs: DIR/logs/<component>.log.
#
# Identities: each component has its own client certificate (cp_kubeconfig), so the API server's
# audit log and syncguard's admission reviews name who did what. Argo CD's controller is
# `argocd-application-controller` in group system:masters (Argo CD's own ClusterRole allows
# everything as well).

AS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
AS_BIN="${AS_BIN:-$AS_ROOT/.tools/bin}"
# The release scripts/install-argocd.sh installed last (its stamp), unless ARGOCD_VERSION says.
ARGOCD_VERSION="${ARGOCD_VERSION:-$(sed -n 's/^argocd=//p' "$AS_BIN/.argocd-tools.stamp" 2>/dev/null)}"
ARGOCD_VERSION="${ARGOCD_VERSION:-v3.6.1}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
# The controller's reconciliation period: short, so a scenario that waits for Argo CD to notice
# something (a deleted Job, a new commit) is bounded by seconds, not Argo CD's default 180 s.
AS_APP_RESYNC="${AS_APP_RESYNC:-10}"
# Seconds the controller sleeps after each sync step but the last (ARGOCD_SYNC_WAVE_DELAY, 2 by
# default). Longer than Argo CD's default so that the applied-order recorder can tell steps
# apart by their pauses even on a busy 2-core machine (tests/oracle/recorder.rs): inside one
# step the controller may pause over 3 s (it waits up to 3 s for a CRD to be Established, and a
# dry run of 30 objects took 3.2 s while cargo compiled beside it), so 4 s was too short.
AS_SYNC_WAVE_DELAY="${AS_SYNC_WAVE_DELAY:-8}"

AS_DIR=""
AS_PIDS=()
AS_ARGOCD_MOD=""
AS_KWOK_MOD=""
AS_GIT_REPO=""
AS_GIT_WORK=""
AS_CONTROLLER_METRICS=""
AS_REPO_METRICS=""
AS_APPSET_METRICS=""
AS_APPSET_PID=""

as_log() { printf '[argocd-stack] %s\n' "$*" >&2; }

# The directory of a module in Go's module cache (downloaded if needed). With the Go toolchain
# install-argocd.sh built with (its stamp): Argo CD 3.6's modules ask for Go 1.27, and an older
# local toolchain refuses to report their directory.
as_module_dir() {
    local dir toolchain
    toolchain="$(sed -n 's/^go=//p' "$AS_BIN/.argocd-tools.stamp" 2>/dev/null)"
    dir="$(cd / && GOTOOLCHAIN="${toolchain:-local}" go mod download -json "$1" 2>/dev/null | jq -r '.Dir // empty')" || return 1
    [[ -n "$dir" && -d "$dir" ]] || return 1
    echo "$dir"
}

# as_audit_args DIR: sets CP_APISERVER_EXTRA_ARGS so that the API server writes an audit log
# (DIR/audit.log) of every write (create/update/patch/delete) at Metadata level. Call before
# cp_start. Reads, watches and the noisy Lease/Event traffic are left out.
as_audit_args() {
    local dir="$1"
    mkdir -p "$dir"
    cat >"$dir/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    resources:
      - {group: coordination.k8s.io, resources: [leases]}
      - {group: "", resources: [events]}
      - {group: events.k8s.io, resources: [events]}
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
  - level: None
EOF
    CP_APISERVER_EXTRA_ARGS=(
        --audit-policy-file "$dir/audit-policy.yaml"
        --audit-log-path "$dir/audit.log"
        --audit-log-format json
        --audit-log-mode blocking
        --audit-log-maxsize 200
    )
}

# as_wait WHAT PID TIMEOUT COMMAND...: polls COMMAND until it succeeds; fails if PID dies or the
# timeout passes, with the tail of the component's log.
as_wait() {
    local what="$1" pid="$2" timeout="$3"
    shift 3
    local deadline=$((SECONDS + timeout))
    while ! "$@" >/dev/null 2>&1; do
        if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
            cp_tail "$AS_DIR/logs/$what.log" 40
            as_log "FAILED: $what exited during start-up"
            return 1
        fi
        if ((SECONDS >= deadline)); then
            cp_tail "$AS_DIR/logs/$what.log" 40
            as_log "FAILED: $what not ready after ${timeout}s"
            return 1
        fi
        sleep 0.5
    done
}

# as_spawn NAME CMD...: runs CMD in the background, output to logs/NAME.log; remembers the pid.
as_spawn() {
    local name="$1"
    shift
    "$@" >"$AS_DIR/logs/$name.log" 2>&1 &
    AS_LAST_PID=$!
    AS_PIDS+=("$AS_LAST_PID:$name")
    echo "$AS_LAST_PID" >"$AS_DIR/$name.pid"
}

as_check_binaries() {
    local b
    for b in kube-controller-manager kube-scheduler argocd kwok; do
        [[ -x "$AS_BIN/$b" ]] || { as_log "missing $AS_BIN/$b; run scripts/install-kube.sh and scripts/install-argocd.sh first"; return 1; }
    done
    command -v redis-server >/dev/null 2>&1 || { as_log "redis-server is missing; run scripts/install-argocd.sh"; return 1; }
    command -v git >/dev/null 2>&1 || { as_log "git is required"; return 1; }
    AS_ARGOCD_MOD="$(as_module_dir "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION")" ||
        { as_log "argo-cd $ARGOCD_VERSION is not in the Go module cache; run scripts/install-argocd.sh"; return 1; }
    AS_KWOK_MOD="$(as_module_dir "sigs.k8s.io/kwok@$KWOK_VERSION")" ||
        { as_log "kwok $KWOK_VERSION is not in the Go module cache; run scripts/install-argocd.sh"; return 1; }
}

# The Kubernetes controllers: every controller that needs no service-account tokens (there are no
# real pods to mount them) and none of the bootstrap-token ones. They make Jobs create pods, fail
# at activeDeadlineSeconds/backoffLimit, disappear after ttlSecondsAfterFinished; Deployments
# roll out; foreground deletes and namespace deletion finish (garbage collector, namespace
# controller).
as_start_kube_controllers() {
    local pki="$CP_DIR/pki" kc
    kc="$(cp_kubeconfig controller-manager kube-controller-manager system:masters)" || return 1
    as_spawn kube-controller-manager "$AS_BIN/kube-controller-manager" --kubeconfig "$kc" \
        --leader-elect=false --secure-port=0 --use-service-account-credentials=false \
        --controllers='*,-serviceaccount-token,-bootstrapsigner,-tokencleaner' \
        --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
        --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
        --concurrent-gc-syncs 5 --v=1
    kc="$(cp_kubeconfig scheduler kube-scheduler system:masters)" || return 1
    as_spawn kube-scheduler "$AS_BIN/kube-scheduler" --kubeconfig "$kc" \
        --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
        --leader-elect=false --secure-port=0 --v=1
}

# kwok: one fake node (kwok-0), pods driven by tests/e2e/argocd/kwok-stages.yaml.
as_start_kwok() {
    local kc stages="$AS_KWOK_MOD/kustomize/stage/node"
    kc="$(cp_kubeconfig kwok kwok-controller system:masters)" || return 1
    as_spawn kwok "$AS_BIN/kwok" --kubeconfig "$kc" \
        --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
        --node-ip=10.0.0.1 --cidr=10.0.1.0/24 --server-address=127.0.0.1:0 \
        --config "$stages/fast/node-initialize.yaml" --config "$stages/heartbeat/node-heartbeat.yaml" \
        --config "$AS_ROOT/tests/e2e/argocd/kwok-stages.yaml"
    "$KUBECTL" apply -f - >/dev/null <<'EOF' || return 1
apiVersion: v1
kind: Node
metadata:
  name: kwok-0
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-0, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
spec: {}
EOF
    as_wait kwok "$AS_LAST_PID" 60 node_ready kwok-0 || return 1
}

crd_established() {
    [[ "$("$KUBECTL" get crd "$1" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" == True ]]
}

node_ready() {
    [[ "$("$KUBECTL" get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

# The bare git repository Applications sync from, and a work tree the harness commits into.
as_init_git() {
    AS_GIT_REPO="$AS_DIR/git/apps.git"
    AS_GIT_WORK="$AS_DIR/git/work"
    mkdir -p "$AS_DIR/git"
    git init -q --bare -b main "$AS_GIT_REPO" || return 1
    git init -q -b main "$AS_GIT_WORK" || return 1
    git -C "$AS_GIT_WORK" config user.email e2e@syncguard.dev
    git -C "$AS_GIT_WORK" config user.name "syncguard e2e"
    git -C "$AS_GIT_WORK" remote add origin "$AS_GIT_REPO"
    echo "Manifests committed by tests/e2e for Argo CD to sync." >"$AS_GIT_WORK/README"
    git -C "$AS_GIT_WORK" add README
    git -C "$AS_GIT_WORK" commit -q -m init
    git -C "$AS_GIT_WORK" push -q origin main || return 1
}

# as_git_publish DIR_IN_REPO SRC...: replaces DIR_IN_REPO in the repo with copies of SRC files or
# directories, commits and pushes; prints the new revision. (Argo CD sees it at its next refresh;
# annotate the Application with argocd.argoproj.io/refresh=hard to ask for one.)
as_git_publish() {
    local dir="$1" src
    shift
    rm -rf "${AS_GIT_WORK:?}/$dir"
    mkdir -p "$AS_GIT_WORK/$dir"
    for src in "$@"; do
        cp -R "$src" "$AS_GIT_WORK/$dir/"
    done
    git -C "$AS_GIT_WORK" add -A "$dir" >/dev/null
    git -C "$AS_GIT_WORK" commit -q -m "e2e: $dir" --allow-empty
    git -C "$AS_GIT_WORK" push -q origin main || return 1
    git -C "$AS_GIT_WORK" rev-parse HEAD
}

as_git_url() { echo "file://$AS_GIT_REPO"; }

# Argo CD's CRDs, the argocd namespace, its default config maps and secret, and the `default`
# AppProject (argocd-server creates it normally; no argocd-server runs here).
as_install_argocd_objects() {
    local f
    for f in "$AS_ARGOCD_MOD"/manifests/crds/{application,applicationset,appproject}-crd.yaml; do
        "$KUBECTL" apply --server-side --field-manager e2e -f "$f" >/dev/null || { as_log "FAILED: applying $f"; return 1; }
    done
    # Polled: `kubectl wait` fails at once on a CRD whose status has no conditions yet.
    local crd
    for crd in applications.argoproj.io applicationsets.argoproj.io appprojects.argoproj.io; do
        as_wait kube-apiserver "" 60 crd_established "$crd" || { as_log "FAILED: CRD $crd not Established"; return 1; }
    done
    "$KUBECTL" create namespace argocd >/dev/null
    for f in argocd-cm argocd-rbac-cm argocd-cmd-params-cm argocd-secret argocd-gpg-keys-cm argocd-ssh-known-hosts-cm argocd-tls-certs-cm; do
        "$KUBECTL" apply -n argocd -f "$AS_ARGOCD_MOD/manifests/base/config/$f.yaml" >/dev/null || { as_log "FAILED: applying $f"; return 1; }
    done
    "$KUBECTL" apply -f - >/dev/null <<'EOF' || return 1
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: argocd}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  clusterResourceWhitelist: [{group: "*", kind: "*"}]
EOF
}

# The helm and kustomize the pinned Argo CD release bundles (scripts/install-render-tools.sh),
# first on the repo-server's PATH when they are installed, as they are in Argo CD's image.
as_render_bin() {
    if [[ -x "$AS_ROOT/.tools/render-bin/helm" && -x "$AS_ROOT/.tools/render-bin/kustomize" ]]; then
        printf '%s:' "$AS_ROOT/.tools/render-bin"
    fi
}

# repo-server, application-controller and ApplicationSet controller, with per-run data directories (the ask-pass socket
# and TLS/SSH/GPG paths default to fixed places under /tmp).
as_start_argocd() {
    local kc redis_port repo_port
    kc="$(cp_kubeconfig argocd argocd-application-controller system:masters)" || return 1
    mkdir -p "$AS_DIR/argocd/"{tls,ssh,gpg/keys,gpg/source,tmp,home,bin}
    # The helper scripts Argo CD's image puts on PATH: from 3.6 the repo-server runs
    # git-verify-wrapper.sh on every revision it renders, GPG enabled or not, and answers
    # "permission denied" when it cannot.
    local helper
    for helper in git-verify-wrapper.sh gpg-wrapper.sh git-ask-pass.sh; do
        if [[ -f "$AS_ARGOCD_MOD/hack/$helper" ]]; then
            cp "$AS_ARGOCD_MOD/hack/$helper" "$AS_DIR/argocd/bin/" && chmod 755 "$AS_DIR/argocd/bin/$helper" || return 1
        fi
    done
    redis_port="$(cp_free_port)" || return 1
    as_spawn redis redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
        --dir "$AS_DIR/argocd/tmp"
    as_wait redis "$AS_LAST_PID" 30 redis-cli -p "$redis_port" ping || return 1
    AS_REDIS_PORT="$redis_port"

    local env=(
        env "KUBECONFIG=$kc" ARGOCD_FAKE_IN_CLUSTER=true
        "HOME=$AS_DIR/argocd/home" "TMPDIR=$AS_DIR/argocd/tmp"
        "ARGOCD_TLS_DATA_PATH=$AS_DIR/argocd/tls" "ARGOCD_SSH_DATA_PATH=$AS_DIR/argocd/ssh"
        "ARGOCD_GNUPGHOME=$AS_DIR/argocd/gpg/keys" "ARGOCD_GPG_DATA_PATH=$AS_DIR/argocd/gpg/source"
        ARGOCD_GPG_ENABLED=false "ARGOCD_ASK_PASS_SOCK=$AS_DIR/argocd/asksock"
        "PATH=$AS_DIR/argocd/bin:$(as_render_bin)$AS_BIN:$PATH"
    )
    repo_port="$(cp_free_port)" && AS_REPO_METRICS="$(cp_free_port)" || return 1
    as_spawn argocd-repo-server "${env[@]}" ARGOCD_BINARY_NAME=argocd-repo-server "$AS_BIN/argocd" \
        --address 127.0.0.1 --port "$repo_port" \
        --metrics-address 127.0.0.1 --metrics-port "$AS_REPO_METRICS" \
        --redis "127.0.0.1:$redis_port" --loglevel info --logformat text
    as_wait argocd-repo-server "$AS_LAST_PID" 60 curl -fsS "http://127.0.0.1:$AS_REPO_METRICS/healthz" || return 1

    AS_CONTROLLER_METRICS="$(cp_free_port)" || return 1
    # HOSTNAME ends in the shard number, as in Argo CD's StatefulSet (shard 0 of 1).
    as_spawn argocd-application-controller "${env[@]}" HOSTNAME=argocd-application-controller-0 \
        "ARGOCD_SYNC_WAVE_DELAY=$AS_SYNC_WAVE_DELAY" \
        ARGOCD_BINARY_NAME=argocd-application-controller "$AS_BIN/argocd" \
        --namespace argocd --redis "127.0.0.1:$redis_port" --repo-server "127.0.0.1:$repo_port" \
        --metrics-port "$AS_CONTROLLER_METRICS" \
        --app-resync "$AS_APP_RESYNC" --app-resync-jitter 0 --self-heal-timeout-seconds 2 \
        --status-processors 4 --operation-processors 4 --loglevel info --logformat text
    as_wait argocd-application-controller "$AS_LAST_PID" 90 curl -fsS "http://127.0.0.1:$AS_CONTROLLER_METRICS/healthz" || return 1

    # The ApplicationSet controller: started here but not waited for (the scenarios that need it
    # call as_appset_ready), so it adds nothing to the stack's start. It watches namespace argocd
    # (--namespace), asks the repo-server for git generators, and binds metrics, probes and its
    # webhook server (always started; no flag turns it off) on loopback. No SCM or pull-request
    # provider is reachable, so those generators are off.
    AS_APPSET_METRICS="$(cp_free_port)" || return 1
    local appset_probe appset_webhook
    appset_probe="$(cp_free_port)" && appset_webhook="$(cp_free_port)" || return 1
    kc="$(cp_kubeconfig appset argocd-applicationset-controller system:masters)" || return 1
    env=("${env[@]/#KUBECONFIG=*/KUBECONFIG=$kc}")
    as_spawn argocd-applicationset-controller "${env[@]}" \
        ARGOCD_BINARY_NAME=argocd-applicationset-controller "$AS_BIN/argocd" \
        --namespace argocd --argocd-repo-server "127.0.0.1:$repo_port" \
        --metrics-addr "127.0.0.1:$AS_APPSET_METRICS" --probe-addr "127.0.0.1:$appset_probe" \
        --webhook-addr "127.0.0.1:$appset_webhook" --enable-scm-providers=false \
        --enable-leader-election=false --loglevel info --logformat text
    AS_APPSET_PID="$AS_LAST_PID"
}

# as_appset_ready: waits until the ApplicationSet controller serves its metrics (its manager,
# informers and reconciler are up then).
as_appset_ready() {
    AS_DIR="${AS_DIR:-$1}"
    as_wait argocd-applicationset-controller "$AS_APPSET_PID" 90 curl -fsS "http://127.0.0.1:$AS_APPSET_METRICS/metrics"
}

as_start() {
    AS_DIR="$1"
    local started=$SECONDS
    mkdir -p "$AS_DIR/logs"
    as_check_binaries || return 1
    as_start_kube_controllers || return 1
    as_start_kwok || return 1
    as_init_git || return 1
    as_install_argocd_objects || return 1
    as_start_argocd || return 1
    as_log "Argo CD $ARGOCD_VERSION up in $((SECONDS - started)) s: controller metrics on 0.0.0.0:$AS_CONTROLLER_METRICS (Argo CD binds all interfaces; no flag), git $(as_git_url)"
}

as_stop() {
    local i entry
    for ((i = ${#AS_PIDS[@]} - 1; i >= 0; i--)); do
        entry="${AS_PIDS[$i]}"
        cp_stop_pid "${entry%%:*}" "${entry#*:}"
    done
    AS_PIDS=()
}

# The resident set size (KiB) of each component still running, as "name rss" lines.
as_rss() {
    local entry pid
    for entry in "${AS_PIDS[@]}" "$CP_APISERVER_PID:kube-apiserver" "$CP_ETCD_PID:etcd"; do
        pid="${entry%%:*}"
        [[ -n "$pid" && -r "/proc/$pid/status" ]] || continue
        printf '%s %s\n' "${entry#*:}" "$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status")"
    done
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    # shellcheck source-path=SCRIPTDIR source=control-plane.sh
    source "$AS_ROOT/tests/e2e/control-plane.sh"
    case "${1:-}" in
        up)
            dir="$(mktemp -d "${TMPDIR:-/tmp}/syncguard-argocd.XXXXXX")"
            trap 'as_stop; cp_stop; echo "logs kept in $dir" >&2' EXIT
            trap 'exit 130' INT TERM
            as_audit_args "$dir/audit"
            cp_start "$dir/cp"
            as_start "$dir/stack"
            echo "export KUBECONFIG=$KUBECONFIG"
            echo "git repository: $(as_git_url) (work tree $AS_GIT_WORK)"
            echo "stack up; press ^C to stop" >&2
            while kill -0 "$CP_APISERVER_PID" 2>/dev/null; do sleep 1; done
            cp_fail "kube-apiserver exited"
            ;;
        *)
            echo "usage: $0 up    (or source it after control-plane.sh and call as_start DIR / as_stop)" >&2
            exit 2
            ;;
    esac
fi
