#!/usr/bin/env bash
# A throwaway Kubernetes control plane for the end-to-end tests: etcd + kube-apiserver on
# loopback, free ports, a temporary data directory, RBAC, and an admin identity (client
# certificate in group system:masters). No kubelet, scheduler or controller-manager: nothing is
# ever scheduled or reconciled, which is all admission tests need.
#
# Two ways to use it:
#   source tests/e2e/control-plane.sh      # from a script; then:
#     cp_start DIR                          # DIR: an empty directory it may fill
#     ... KUBECONFIG is exported, kubectl works ...
#     cp_stop                               # idempotent; call it from an EXIT trap
#   tests/e2e/control-plane.sh up           # interactive: start, print KUBECONFIG, wait for ^C
#
# Binaries come from .tools/bin (scripts/install-kube.sh) unless KUBE_APISERVER, KUBECTL or
# ETCD name others. Logs: DIR/logs/{etcd,kube-apiserver}.log; on a failed start the tail of the
# API server's log is printed.

# Not `set -euo pipefail` here: a sourced file must not change its caller's shell options. The
# functions are written to work under `set -euo pipefail` (the e2e runner's mode), and the
# `up` entry point at the bottom sets it.

CP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KUBE_APISERVER="${KUBE_APISERVER:-$CP_ROOT/.tools/bin/kube-apiserver}"
KUBECTL="${KUBECTL:-$CP_ROOT/.tools/bin/kubectl}"
ETCD="${ETCD:-$CP_ROOT/.tools/bin/etcd}"
# Seconds to wait for etcd and for the API server to report ready (a cold start on a busy
# 2-core machine takes 10-20 s; the margin is for noisy neighbours).
CP_START_TIMEOUT="${CP_START_TIMEOUT:-120}"

# Extra kube-apiserver flags: set the array CP_APISERVER_EXTRA_ARGS before cp_start (the Argo CD
# stack adds its audit log that way).

CP_DIR=""
CP_ETCD_PID=""
CP_APISERVER_PID=""

cp_log() { printf '[control-plane] %s\n' "$*" >&2; }

# A TCP port on 127.0.0.1 that nothing listens on (random between 10000 and the kernel's ephemeral range; checked by
# trying to connect). A race with another process is possible but unlikely; start fails loudly.
cp_free_port() {
    local port i low=32768 span
    # Below the kernel's ephemeral range: a port the kernel may hand to an outgoing connection
    # passes the connect test below and still fails the bind later (seen once in CI: redis
    # "Address already in use" while the stack's components were connecting to each other).
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
    ((low > 12000)) || low=32768
    span=$((low - 10000))
    for i in $(seq 1 200); do
        port=$((10000 + (RANDOM * 32768 + RANDOM) % span))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
        : "$i"
    done
    cp_log "no free port found"
    return 1
}

# The last lines of a log, framed, for a failure message.
cp_tail() {
    local file="$1" lines="${2:-40}"
    [[ -f "$file" ]] || return 0
    printf -- '----- last %s lines of %s -----\n' "$lines" "$file" >&2
    tail -n "$lines" "$file" >&2
    printf -- '----- end of %s -----\n' "$(basename "$file")" >&2
}

cp_fail() {
    cp_log "FAILED: $*"
    cp_tail "$CP_DIR/logs/kube-apiserver.log" 60
    cp_tail "$CP_DIR/logs/etcd.log" 20
    return 1
}

# Certificates: a CA, the API server's serving certificate (127.0.0.1 and localhost), and an
# admin client certificate (O=system:masters, which RBAC lets do anything); a service-account
# signing key pair. All short-lived and only on loopback.
cp_certs() {
    local pki="$1"
    mkdir -p "$pki"
    (
        cd "$pki"
        openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj "/CN=syncguard-e2e-ca" \
            -keyout ca.key -out ca.crt
        openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=kube-apiserver" \
            -keyout apiserver.key -out apiserver.csr
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >apiserver.ext
        openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -sha256 -extfile apiserver.ext -out apiserver.crt
        openssl req -newkey rsa:2048 -nodes -sha256 -subj "/O=system:masters/CN=syncguard-e2e-admin" \
            -keyout admin.key -out admin.csr
        printf 'extendedKeyUsage=clientAuth\n' >admin.ext
        openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -sha256 -extfile admin.ext -out admin.crt
        openssl genrsa -out sa.key 2048
        openssl rsa -in sa.key -pubout -out sa.pub
    ) >"$pki/openssl.log" 2>&1 || {
        cat "$pki/openssl.log" >&2
        cp_log "FAILED: generating certificates with openssl"
        return 1
    }
}

cp_wait() {
    # cp_wait WHAT PID COMMAND... : poll COMMAND until it succeeds, the process dies, or timeout.
    local what="$1" pid="$2"
    shift 2
    local deadline=$((SECONDS + CP_START_TIMEOUT))
    while ! "$@" >/dev/null 2>&1; do
        if ! kill -0 "$pid" 2>/dev/null; then
            cp_fail "$what exited during start-up"
            return 1
        fi
        if ((SECONDS >= deadline)); then
            cp_fail "$what not ready after ${CP_START_TIMEOUT}s"
            return 1
        fi
        sleep 0.5
    done
}

cp_start() {
    CP_DIR="$1"
    local b
    for b in "$KUBE_APISERVER" "$KUBECTL" "$ETCD"; do
        if [[ ! -x "$b" ]]; then
            cp_log "missing $b; run scripts/install-kube.sh first"
            return 1
        fi
    done
    mkdir -p "$CP_DIR/logs"
    mkdir -m 700 "$CP_DIR/etcd" # etcd warns about anything wider
    cp_certs "$CP_DIR/pki" || return 1
    local pki="$CP_DIR/pki" started=$SECONDS

    local etcd_port etcd_peer_port
    etcd_port="$(cp_free_port)" && etcd_peer_port="$(cp_free_port)" || return 1
    # --unsafe-no-fsync: the data is thrown away after the run; fsync on a shared disk only
    # makes every write slower.
    "$ETCD" --name e2e --data-dir "$CP_DIR/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
        --initial-cluster "e2e=http://127.0.0.1:$etcd_peer_port" \
        --unsafe-no-fsync --log-level warn >"$CP_DIR/logs/etcd.log" 2>&1 &
    CP_ETCD_PID=$!
    echo "$CP_ETCD_PID" >"$CP_DIR/etcd.pid"
    cp_wait etcd "$CP_ETCD_PID" curl -fsS "http://127.0.0.1:$etcd_port/health" || return 1

    local port
    port="$(cp_free_port)" || return 1
    # Flags as envtest (controller-runtime) runs a test API server, plus RBAC:
    # - the ServiceAccount admission plugin is off: with no controller-manager no namespace ever
    #   gets its "default" ServiceAccount, and Pods could not be created;
    # - --endpoint-reconciler-type=none: no "kubernetes" Endpoints pointing at a loopback address.
    "$KUBE_APISERVER" \
        --etcd-servers "http://127.0.0.1:$etcd_port" \
        --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
        --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
        --client-ca-file "$pki/ca.crt" \
        --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
        --service-account-issuer https://kubernetes.default.svc \
        --service-cluster-ip-range 10.0.0.0/24 \
        --authorization-mode RBAC \
        --disable-admission-plugins ServiceAccount \
        --endpoint-reconciler-type none \
        --allow-privileged=true --profiling=false \
        --cert-dir "$CP_DIR/apiserver-certs" \
        ${CP_APISERVER_EXTRA_ARGS[@]+"${CP_APISERVER_EXTRA_ARGS[@]}"} \
        >"$CP_DIR/logs/kube-apiserver.log" 2>&1 &
    CP_APISERVER_PID=$!
    echo "$CP_APISERVER_PID" >"$CP_DIR/kube-apiserver.pid"

    export CP_APISERVER_URL="https://127.0.0.1:$port"
    export KUBECONFIG="$CP_DIR/kubeconfig"
    cp_write_kubeconfig "$KUBECONFIG" e2e-admin "$pki/admin"
    cp_wait kube-apiserver "$CP_APISERVER_PID" \
        curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$CP_APISERVER_URL/readyz" || return 1
    # /readyz includes the RBAC bootstrap roles; also make sure the admin identity really is
    # authorised (a wrong group would only show up later as confusing 403s).
    if ! "$KUBECTL" auth can-i '*' '*' --all-namespaces >/dev/null 2>"$CP_DIR/logs/can-i.err"; then
        cat "$CP_DIR/logs/can-i.err" >&2
        cp_fail "the admin client certificate is not authorised for everything"
        return 1
    fi
    cp_log "kube-apiserver $("$KUBE_APISERVER" --version | awk '{print $2}') ready at $CP_APISERVER_URL in $((SECONDS - started)) s (etcd at 127.0.0.1:$etcd_port)"
}

# cp_write_kubeconfig FILE USER CERT_PREFIX: a kubeconfig for the control plane's API server that
# authenticates with CERT_PREFIX.crt / CERT_PREFIX.key.
cp_write_kubeconfig() {
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: e2e
    cluster:
      server: $CP_APISERVER_URL
      certificate-authority: $CP_DIR/pki/ca.crt
users:
  - name: $2
    user:
      client-certificate: $3.crt
      client-key: $3.key
contexts:
  - name: e2e
    context: {cluster: e2e, user: $2}
current-context: e2e
EOF
}

# cp_kubeconfig NAME CN [GROUP]: a client certificate for identity CN (in GROUP, if given) signed
# by the control plane's CA, and a kubeconfig for it at DIR/kubeconfig-NAME (its path is printed).
# Each component of a bigger stack (controller-manager, Argo CD, ...) gets its own user, so the
# audit log and admission reviews say who did what.
cp_kubeconfig() {
    local name="$1" cn="$2" group="${3:-}" pki="$CP_DIR/pki" subj
    subj="/CN=$cn"
    [[ -z "$group" ]] || subj="/O=$group$subj"
    (
        cd "$pki"
        openssl req -newkey rsa:2048 -nodes -sha256 -subj "$subj" -keyout "$name.key" -out "$name.csr"
        printf 'extendedKeyUsage=clientAuth\n' >"$name.ext"
        openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -sha256 -extfile "$name.ext" -out "$name.crt"
    ) >>"$pki/openssl.log" 2>&1 || { cat "$pki/openssl.log" >&2; cp_log "FAILED: client certificate for $cn"; return 1; }
    local file="$CP_DIR/kubeconfig-$name"
    cp_write_kubeconfig "$file" "$name" "$pki/$name"
    echo "$file"
}

# Applies YAML files of CustomResourceDefinitions and waits until each is Established.
cp_apply_crds() {
    local f
    for f in "$@"; do
        "$KUBECTL" apply -f "$f" >/dev/null || { cp_fail "kubectl apply -f $f"; return 1; }
    done
    local crds
    crds="$("$KUBECTL" get -o name "${@/#/--filename=}")" || return 1
    # shellcheck disable=SC2086 # one name per word
    "$KUBECTL" wait --for condition=Established --timeout 60s $crds >/dev/null \
        || { cp_fail "CRDs not Established: $crds"; return 1; }
}

cp_stop_pid() {
    local pid="$1" name="$2" i
    [[ -n "$pid" ]] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 40); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.25
        : "$i"
    done
    cp_log "$name ($pid) did not stop on SIGTERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
}

cp_stop() {
    cp_stop_pid "$CP_APISERVER_PID" kube-apiserver
    cp_stop_pid "$CP_ETCD_PID" etcd
    CP_APISERVER_PID=""
    CP_ETCD_PID=""
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    case "${1:-}" in
        up)
            dir="$(mktemp -d "${TMPDIR:-/tmp}/syncguard-cp.XXXXXX")"
            trap 'cp_stop; echo "logs kept in $dir/logs" >&2' EXIT
            trap 'exit 130' INT TERM
            cp_start "$dir"
            cp_apply_crds "$CP_ROOT"/tests/e2e/crds/*.yaml
            echo "export KUBECONFIG=$KUBECONFIG"
            echo "control plane up; press ^C to stop" >&2
            while kill -0 "$CP_APISERVER_PID" 2>/dev/null; do sleep 1; done
            cp_fail "kube-apiserver exited"
            ;;
        *)
            echo "usage: $0 up    (or source it and call cp_start DIR / cp_stop)" >&2
            exit 2
            ;;
    esac
fi
