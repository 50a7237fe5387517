#!/usr/bin/env bash
# The CI test of the OCI image (scripts/build-image.sh): runs it with runc, a real OCI runtime
# from Debian, the way the Helm chart runs it, and probes it from outside. See --help.
#
# Exit 2 when it cannot run here (not root, runc/umoci not installable, no network namespaces,
# no seccomp, or the runtime cannot start a container on this kernel: the reason is printed); 1
# when the image misbehaves; 0 when every check passed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The chart's memory limit for the webhook (webhook.resources.limits.memory, in Mi or Gi), so the
# container runs with what a cluster would give it.
MEMORY_LIMIT="$(awk '
    /^webhook:/ { inwebhook = 1; next }
    /^[^ #]/ { inwebhook = 0 }
    inwebhook && /^    limits:/ { inlimits = 1; next }
    inlimits && /^      memory:/ {
        v = $2
        if (v ~ /Mi$/) { sub(/Mi$/, "", v); print v * 1048576 }
        else if (v ~ /Gi$/) { sub(/Gi$/, "", v); print v * 1073741824 }
        exit
    }' "$ROOT/charts/syncguard/values.yaml")"
[[ "$MEMORY_LIMIT" =~ ^[0-9]+$ ]] || { echo "run-image.sh: cannot read webhook.resources.limits.memory (Mi or Gi) from charts/syncguard/values.yaml" >&2; exit 1; }
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -1)"
FIXTURE="$ROOT/tests/fixtures/admission/seed-job-create.json"

usage() {
    cat <<EOF
Usage: scripts/run-image.sh [ARCHIVE]

Runs the image in ARCHIVE (default: target/oci/syncguard-$VERSION.oci.tar, written by
scripts/build-image.sh) with runc (OCI_RUNTIME=crun for crun, but crun 1.8 refuses hosts with
cgroup v1 and a controller on the v2 hierarchy, as this project's machines have) and checks it behaves as the Helm chart needs:

  1. umoci unpacks the archive (checking every blob's digest) into an OCI runtime bundle; the
     runtime config umoci derives from the image config must say user 65532:65532 and
     entrypoint /usr/local/bin/syncguard, and the root filesystem has no shell.
  2. The chart's security context is applied on top: read-only root filesystem, no new
     privileges, every capability dropped, seccomp RuntimeDefault (the containers/common
     profile CRI-O and Podman use as their default, from the Debian package
     golang-github-containers-common, fetched with apt-get download, not installed), the
     chart's webhook memory limit (read from values.yaml); the process runs as 65532 (read
     back from /proc).
  3. \`syncguard serve\` with the chart's arguments (--listen 0.0.0.0:8443, --probe-listen
     0.0.0.0:8080, --cert-dir /etc/syncguard/tls, --policy-overlay /etc/syncguard/policies),
     a throwaway CA and serving certificate (openssl) bind-mounted read-only, in its own network
     namespace joined to this host by a veth pair (198.18.N.0/30, RFC 2544 test addresses).
     From the host: /readyz over plain HTTP and over TLS (verified against the CA), one
     AdmissionReview to /validate and one to /mutate (same uid back, the SG101 warning, the
     activeDeadlineSeconds patch). Then SIGTERM: the container must exit 0.
  4. \`syncguard check examples/\` inside the image (examples/ bind-mounted read-only, no network):
     exit 1 with SG201 and SG101 on the seed incident, as the README says, and the same output
     and exit code as the binary run outside the container.

Everything lives in a temporary directory (the runtime's state included) removed on exit, with
the network namespace and the containers (RUN_IMAGE_KEEP=1 keeps the directory: configs, logs,
answers). Needs root.

Exit codes: 0 passed; 1 a check failed; 2 cannot run here (the reason is printed).
EOF
}

case "${1:-}" in
    -h | --help) usage; exit 0 ;;
esac
ARCHIVE="${1:-$ROOT/target/oci/syncguard-$VERSION.oci.tar}"

fail() { echo "run-image: FAIL: $*" >&2; exit 1; }
skip() { echo "run-image: cannot run the image here: $*" >&2; exit 2; }
ok() { echo "run-image: ok: $*"; }

[[ -f "$ARCHIVE" ]] || fail "no image archive at $ARCHIVE (build it with scripts/build-image.sh)"
[[ $(id -u) -eq 0 ]] || skip "needs root (a network namespace, a veth pair, the runtime as root)"

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null 2>&1 \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
}
# need COMMAND PACKAGE: install PACKAGE from Debian when COMMAND is missing.
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    if command -v apt-get >/dev/null 2>&1; then
        echo "run-image: installing $2 from Debian ..."
        apt_install "$2" || true
    fi
    command -v "$1" >/dev/null 2>&1 || skip "$1 is required (apt-get install $2) and could not be installed"
}
RT="${OCI_RUNTIME:-runc}"
need "$RT" "$RT"
need umoci umoci
need curl curl
need openssl openssl
need jq jq
need ip iproute2
grep -q '^Seccomp:' /proc/self/status || skip "this kernel has no seccomp (the chart asks for RuntimeDefault)"

WORK="$(mktemp -d)"
STATE="$WORK/runtime-state"
ID="syncguard-image-$$-$RANDOM"
NETNS=""
HOST_VETH=""
cleanup() {
    local c
    for c in "$ID-serve" "$ID-check" "$ID-preflight"; do
        "$RT" --root "$STATE" delete --force "$c" >/dev/null 2>&1 || true
    done
    [[ -z "$NETNS" ]] || ip netns delete "$NETNS" >/dev/null 2>&1 || true
    [[ -z "$HOST_VETH" ]] || ip link delete "$HOST_VETH" >/dev/null 2>&1 || true
    if [[ "${RUN_IMAGE_KEEP:-}" == 1 ]]; then
        echo "run-image: kept $WORK (RUN_IMAGE_KEEP=1)"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
started=$SECONDS

# --- 1. unpack -----------------------------------------------------------------------------
mkdir -p "$WORK/layout" "$STATE"
tar -xf "$ARCHIVE" -C "$WORK/layout"
umoci unpack --image "$WORK/layout:$VERSION" "$WORK/bundle" >"$WORK/umoci.log" 2>&1 \
    || { cat "$WORK/umoci.log" >&2; fail "umoci could not unpack $ARCHIVE (ref $VERSION)"; }
ROOTFS="$WORK/bundle/rootfs"
base="$WORK/bundle/config.json"
got="$(jq -c '[.process.user.uid, .process.user.gid, .process.args]' "$base")"
[[ "$got" == '[65532,65532,["/usr/local/bin/syncguard"]]' ]] \
    || fail "the image config gives user/entrypoint $got, expected 65532:65532 and /usr/local/bin/syncguard"
[[ ! -e "$ROOTFS/bin/sh" && ! -e "$ROOTFS/usr/bin/sh" ]] || fail "the image has a shell"
ok "unpacked $(basename "$ARCHIVE") ($(cat "$ARCHIVE.digest" 2>/dev/null || echo 'no .digest file')): user 65532:65532, entrypoint /usr/local/bin/syncguard, no shell"

# --- 2. the chart's security context -------------------------------------------------------
# seccomp RuntimeDefault: the containers/common profile, resolved for this architecture and for
# a process without capabilities (rules that need a capability are left out, rules that apply
# when one is missing are kept), in runtime-spec form.
seccomp_src=/usr/share/containers/seccomp.json
if [[ ! -f "$seccomp_src" ]]; then
    (cd "$WORK" && { apt-get download golang-github-containers-common >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null 2>&1 && apt-get download golang-github-containers-common >/dev/null 2>&1; }; }) \
        || skip "the default seccomp profile (Debian package golang-github-containers-common) could not be downloaded"
    dpkg-deb -x "$WORK"/golang-github-containers-common_*.deb "$WORK/containers-common"
    seccomp_src="$WORK/containers-common/usr/share/containers/seccomp.json"
fi
case "$(uname -m)" in
    x86_64) goarch=amd64 scmparch=SCMP_ARCH_X86_64 ;;
    aarch64) goarch=arm64 scmparch=SCMP_ARCH_AARCH64 ;;
    *) skip "no seccomp architecture mapping for $(uname -m)" ;;
esac
jq --arg goarch "$goarch" --arg arch "$scmparch" '{
    defaultAction, defaultErrnoRet,
    architectures: ([.archMap[] | select(.architecture == $arch) | [.architecture] + .subArchitectures] | first),
    syscalls: [.syscalls[]
        | select((.includes.caps // []) == [])
        | select((.includes.arches // []) == [] or any(.includes.arches[]; . == $goarch))
        | select(any((.excludes.arches // [])[]; . == $goarch) | not)
        | {names, action}
          + (if .errnoRet then {errnoRet} else {} end)
          + (if (.args // []) != [] then {args} else {} end)]}' "$seccomp_src" >"$WORK/seccomp.json"

# Throwaway CA and serving certificate, as the chart's TLS Secret would hold them (readable by
# the container's user, like a Secret volume's 0644 files).
CIP="" # the container's address, chosen with the network below
pick_subnet() {
    local n
    for _ in 1 2 3 4 5 6 7 8; do
        n=$((RANDOM % 254 + 1))
        if [[ -z "$(ip -4 -o addr show to "198.18.$n.0/24")" ]]; then
            echo "$n"
            return 0
        fi
    done
    return 1
}
NET="$(pick_subnet)" || skip "no free 198.18.N.0/24 test subnet on this host"
HIP="198.18.$NET.1"
CIP="198.18.$NET.2"
mkdir -p "$WORK/tls" "$WORK/policies" "$WORK/ca"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj "/CN=run-image test CA" -keyout "$WORK/ca/ca.key" -out "$WORK/ca/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=syncguard" -keyout "$WORK/tls/tls.key" -out "$WORK/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:%s,DNS:syncguard.syncguard.svc\nextendedKeyUsage=serverAuth\n' "$CIP" >"$WORK/ext.cnf"
openssl x509 -req -in "$WORK/tls.csr" -CA "$WORK/ca/ca.crt" -CAkey "$WORK/ca/ca.key" \
    -CAcreateserial -days 1 -extfile "$WORK/ext.cnf" -out "$WORK/tls/tls.crt" 2>/dev/null
chmod 0755 "$WORK/tls" "$WORK/policies"
chmod 0644 "$WORK/tls/tls.crt" "$WORK/tls/tls.key"

# runtime_config CWD NETNS_PATH MOUNTS_JSON ARGS...: the runtime config umoci derived from the
# image config, with the chart's securityContext and resources on top. An empty NETNS_PATH
# gives the container a new network namespace with nothing but loopback.
runtime_config() {
    local cwd="$1" netns="$2" mounts="$3"
    shift 3
    local args
    # (jq 1.6 reads options after --args, such as --version, as its own.)
    args="$(printf '%s\n' "$@" | jq -R . | jq -cs .)"
    jq --arg rootfs "$ROOTFS" --arg cwd "$cwd" --arg netns "$netns" --argjson mounts "$mounts" \
        --argjson args "$args" --argjson memory "$MEMORY_LIMIT" --slurpfile seccomp "$WORK/seccomp.json" '
        .process.terminal = false
        | .process.args = $args
        | .process.cwd = $cwd
        | .process.noNewPrivileges = true
        | .process.capabilities = {bounding: [], effective: [], inheritable: [], permitted: [], ambient: []}
        | .root = {path: $rootfs, readonly: true}
        | .hostname = "syncguard"
        | .mounts += $mounts
        | .linux.namespaces = ([.linux.namespaces[] | select(.type != "network" and .type != "user")]
            + [{type: "network"} + (if $netns == "" then {} else {path: $netns} end)])
        | .linux.seccomp = $seccomp[0]
        | .linux.resources.memory = {limit: $memory}
        ' "$base"
}
ro_bind() { jq -cn --arg s "$1" --arg d "$2" '{destination: $d, type: "bind", source: $s, options: ["rbind", "ro", "nosuid", "nodev", "noexec"]}'; }

# Whether the runtime can start a container here at all: `syncguard --version` under the full config.
# A failure to start the process from the image is the image's fault (exit 1); a failure to set
# up what the kernel must provide (cgroups, namespaces, seccomp, mounts, permissions) means this
# machine cannot run containers (exit 2); anything else is a failure of this script (exit 1).
mkdir -p "$WORK/preflight"
runtime_config / "" '[]' /usr/local/bin/syncguard --version >"$WORK/preflight/config.json"
if ! "$RT" --root "$STATE" run --bundle "$WORK/preflight" "$ID-preflight" >"$WORK/preflight.log" 2>&1; then
    cat "$WORK/preflight.log" >&2
    if grep -qiE 'exec|executable|shared librar|No such file or directory: .*/usr/local/bin' "$WORK/preflight.log"; then
        fail "$RT started the container but syncguard --version did not run in it"
    fi
    if grep -qiE 'cgroup|unshare|clone|namespace|seccomp|pivot_root|mount|not permitted|permission denied|not supported' \
        "$WORK/preflight.log"; then
        skip "$RT cannot start a container on this machine (see above)"
    fi
    fail "$RT could not run the image (see above)"
fi
grep -q "^syncguard $VERSION" "$WORK/preflight.log" \
    || { cat "$WORK/preflight.log" >&2; fail "syncguard --version in the image did not print syncguard $VERSION"; }
ok "$RT $("$RT" --version | awk 'NR == 1 { print $3 }') starts the image: $(head -1 "$WORK/preflight.log")"

# --- 3. serve ------------------------------------------------------------------------------
NETNS="$ID"
HOST_VETH="sgi$((RANDOM % 100000))h"
ctr_veth="${HOST_VETH%h}c"
ip netns add "$NETNS" 2>"$WORK/ip.err" || { cat "$WORK/ip.err" >&2; NETNS=""; skip "cannot create a network namespace"; }
ip link add "$HOST_VETH" type veth peer name "$ctr_veth" 2>"$WORK/ip.err" \
    || { cat "$WORK/ip.err" >&2; HOST_VETH=""; skip "cannot create a veth pair"; }
ip link set "$ctr_veth" netns "$NETNS"
ip -n "$NETNS" link set lo up
ip -n "$NETNS" addr add "$CIP/30" dev "$ctr_veth"
ip -n "$NETNS" link set "$ctr_veth" up
ip addr add "$HIP/30" dev "$HOST_VETH"
ip link set "$HOST_VETH" up

mkdir -p "$WORK/serve"
mounts="[$(ro_bind "$WORK/tls" /etc/syncguard/tls),$(ro_bind "$WORK/policies" /etc/syncguard/policies)]"
# The chart's webhook arguments (templates/webhook-deployment.yaml, default values) except a
# shorter --shutdown-delay-ms, so the stop below does not wait 5 s.
runtime_config / "/var/run/netns/$NETNS" "$mounts" /usr/local/bin/syncguard serve \
    --listen=0.0.0.0:8443 --probe-listen=0.0.0.0:8080 --cert-dir=/etc/syncguard/tls \
    --policy-overlay=/etc/syncguard/policies --on-error=allow --eval-timeout-ms=2000 \
    --header-read-timeout-ms=5000 --body-read-timeout-ms=5000 --max-connections=256 \
    --shutdown-delay-ms=200 --log-format=json >"$WORK/serve/config.json"
"$RT" --root "$STATE" run --bundle "$WORK/serve" "$ID-serve" >"$WORK/serve.log" 2>&1 &
serve_pid=$!
serve_fail() { tail -n 40 "$WORK/serve.log" >&2; fail "$*"; }

CURL=(curl -fsS --noproxy '*' --max-time 10)
TLS=("${CURL[@]}" --cacert "$WORK/ca/ca.crt")
t0=$SECONDS
deadline=$((t0 + 60))
until "${CURL[@]}" -o /dev/null "http://$CIP:8080/readyz" 2>/dev/null; do
    kill -0 "$serve_pid" 2>/dev/null || serve_fail "syncguard serve exited before it was ready"
    ((SECONDS < deadline)) || serve_fail "syncguard serve was not ready within 60 s"
    sleep 0.2
done
ok "serve ready after $((SECONDS - t0)) s (GET http://$CIP:8080/readyz from the host)"

# What the kernel says about the container's process: the chart's securityContext in effect.
cpid="$("$RT" --root "$STATE" state "$ID-serve" | jq -r .pid)"
status="$(cat "/proc/$cpid/status")"
for want in 'Uid:	65532	65532	65532	65532' 'Gid:	65532	65532	65532	65532' \
    'CapEff:	0000000000000000' 'CapBnd:	0000000000000000' 'NoNewPrivs:	1' 'Seccomp:	2'; do
    grep -qF "$want" <<<"$status" || serve_fail "/proc/$cpid/status lacks '${want//	/ }'"
done
awk '$5 == "/" { print $6 }' "/proc/$cpid/mountinfo" | grep -qE '^ro(,|$)' \
    || serve_fail "the container's root filesystem is not mounted read-only"
# The memory limit, from the process's cgroup (v1 memory controller, else the v2 hierarchy).
cg="$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$cpid/cgroup")"
if [[ -n "$cg" ]]; then
    limit="$(cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes" 2>/dev/null || true)"
else
    cg="$(awk -F: '$1 == "0" { print $3 }' "/proc/$cpid/cgroup")"
    limit="$(cat "/sys/fs/cgroup$cg/memory.max" 2>/dev/null || true)"
fi
[[ "$limit" == "$MEMORY_LIMIT" ]] || serve_fail "the container's memory limit is '$limit', expected $MEMORY_LIMIT (the chart's webhook limit)"
ok "process $cpid: uid/gid 65532, no capabilities, no_new_privs, seccomp filter, read-only /, $((MEMORY_LIMIT / 1048576)) MiB memory limit"

[[ "$("${TLS[@]}" "https://$CIP:8443/readyz")" == ok* ]] || serve_fail "GET https://$CIP:8443/readyz did not answer ok"
ok "GET https://$CIP:8443/readyz over TLS, certificate verified against the test CA"

uid="$(jq -r .request.uid "$FIXTURE")"
for endpoint in validate mutate; do
    "${TLS[@]}" -H 'Content-Type: application/json' --data-binary "@$FIXTURE" \
        "https://$CIP:8443/$endpoint" >"$WORK/$endpoint.json" \
        || serve_fail "POST /$endpoint failed"
    jq -e --arg uid "$uid" '.apiVersion == "admission.k8s.io/v1" and .kind == "AdmissionReview"
        and .response.uid == $uid and (.response.allowed | type == "boolean")' "$WORK/$endpoint.json" >/dev/null \
        || { cat "$WORK/$endpoint.json" >&2; serve_fail "POST /$endpoint: not an AdmissionReview answering uid $uid"; }
done
jq -e '[.response.warnings[]? | select(startswith("SG101"))] | length > 0' "$WORK/validate.json" >/dev/null \
    || { cat "$WORK/validate.json" >&2; serve_fail "POST /validate: no SG101 warning for the seed incident's hook Job"; }
if ! jq -e '.response.patchType == "JSONPatch"' "$WORK/mutate.json" >/dev/null \
    || ! jq -r .response.patch "$WORK/mutate.json" | base64 -d \
    | jq -e 'any(.[]; .path | test("activeDeadlineSeconds"))' >/dev/null; then
    cat "$WORK/mutate.json" >&2
    serve_fail "POST /mutate: no activeDeadlineSeconds patch for the seed incident's hook Job"
fi
ok "POST /validate and /mutate: AdmissionReviews for uid $uid (SG101 warning, activeDeadlineSeconds patch)"

"$RT" --root "$STATE" kill "$ID-serve" TERM
deadline=$((SECONDS + 30))
while kill -0 "$serve_pid" 2>/dev/null; do
    ((SECONDS < deadline)) || serve_fail "syncguard serve did not stop within 30 s of SIGTERM"
    sleep 0.2
done
serve_rc=0
wait "$serve_pid" || serve_rc=$?
[[ $serve_rc -eq 0 ]] || serve_fail "syncguard serve exited $serve_rc after SIGTERM, expected 0"
"$RT" --root "$STATE" delete --force "$ID-serve" >/dev/null 2>&1 || true
ok "SIGTERM: serve stopped, exit 0"

# --- 4. check ------------------------------------------------------------------------------
mkdir -p "$WORK/check"
runtime_config /work "" "[$(ro_bind "$ROOT/examples" /work/examples)]" \
    /usr/local/bin/syncguard check examples/ >"$WORK/check/config.json"
check_rc=0
"$RT" --root "$STATE" run --bundle "$WORK/check" "$ID-check" >"$WORK/check.out" 2>"$WORK/check.err" || check_rc=$?
if [[ $check_rc -ne 1 ]]; then
    cat "$WORK/check.out" "$WORK/check.err" >&2
    fail "syncguard check examples/ in the image exited $check_rc, expected 1 (the seed incident is blocked)"
fi
for rule in SG201 SG101; do
    grep -qE "^examples/seed-incident/.*[[:space:]]${rule}[[:space:]]" "$WORK/check.out" \
        || { cat "$WORK/check.out" >&2; fail "syncguard check examples/ in the image reported no $rule on the seed incident"; }
done
host_rc=0
(cd "$ROOT" && "$ROOTFS/usr/local/bin/syncguard" check examples/) >"$WORK/host.out" 2>/dev/null || host_rc=$?
if [[ $host_rc -ne $check_rc ]] || ! cmp -s "$WORK/host.out" "$WORK/check.out"; then
    diff "$WORK/host.out" "$WORK/check.out" >&2 || true
    fail "check in the image differs from the same binary run outside it (exit $host_rc there)"
fi
ok "check examples/ in the image: exit 1, SG201 and SG101 on the seed incident, same output as outside"

echo "run-image: passed in $((SECONDS - started)) s"
