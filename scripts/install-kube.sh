#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and etcd from the Go
# module proxy into .tools/bin (git-ignored), for the end-to-end tests in tests/e2e/ (a real API
# server calling `syncguard serve`; the controller-manager and scheduler make Jobs, Deployments,
# garbage collection and namespace deletion really happen under the real Argo CD controller).
#
# k8s.io/kubernetes cannot be `go install`ed: its go.mod requires its ~30 staging modules
# (k8s.io/api, k8s.io/apiserver, ...) at v0.0.0 and replaces them with ./staging/... paths that
# only exist in its git tree. So this script writes a small wrapper module (.tools/kube-build)
# that requires k8s.io/kubernetes at the pinned version and replaces each of those staging
# modules with its published v0.MINOR.PATCH. The staging list is read from that version's own
# go.mod (every k8s.io/* requirement at exactly v0.0.0), never typed by hand.
#
# etcd is built in the same invocation from go.etcd.io/etcd/server/v3 (its main package), at the
# version k8s.io/kubernetes itself requires, i.e. the etcd the API server is built and tested
# against. (Debian's etcd-server is 3.4, two minors older than the 3.6 client Kubernetes 1.34
# uses; building it here costs little because it shares most dependencies with the API server.)
#
# Idempotent: when .tools/bin holds the three binaries with the pinned versions (stamp file, and
# each binary reports its version) it exits at once. Go's module and build caches stay in their
# default locations, so a rebuild after a version bump, or into a fresh checkout on a machine that
# built before, takes seconds to a minute; a cold build takes several minutes (tests/e2e/README.md).
#
# Override with KUBE_VERSION=v1.X.Y (a k8s.io/kubernetes version the module proxy serves; its
# staging modules must be published at v0.X.Y). ETCD_VERSION defaults to the version
# k8s.io/kubernetes requires and can only be raised (Go's minimal version selection).
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
BUILD_DIR="$ROOT/.tools/kube-build"
STAMP="$BIN_DIR/.kube-tools.stamp"
# The commands of k8s.io/kubernetes built here (etcd comes from its own module).
KUBE_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

die() {
    echo "install-kube: $*" >&2
    exit "${EXIT_CODE:-1}"
}

if [[ ! "$KUBE_VERSION" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]]; then
    die "KUBE_VERSION must look like v1.34.4, got '$KUBE_VERSION'"
fi
STAGING_VERSION="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"

# The stamp records what was built; the binaries are also asked, so a stamp left next to a
# half-copied or foreign binary does not count.
installed_ok() {
    local b
    [[ -f "$STAMP" ]] || return 1
    for b in "${KUBE_CMDS[@]}" etcd; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
    local want_kube want_etcd
    want_kube="$(sed -n 's/^kubernetes=//p' "$STAMP")"
    want_etcd="$(sed -n 's/^etcd=//p' "$STAMP")"
    [[ "$want_kube" == "$KUBE_VERSION" ]] || return 1
    if [[ -n "${ETCD_VERSION:-}" && "$want_etcd" != "$ETCD_VERSION" ]]; then return 1; fi
    # Outputs are captured before matching: `cmd | grep -q` can kill cmd with SIGPIPE, which
    # pipefail turns into a failure.
    local out
    for b in kube-apiserver kube-controller-manager kube-scheduler; do
        out="$("$BIN_DIR/$b" --version 2>/dev/null)" || return 1
        [[ "$out" == "Kubernetes $KUBE_VERSION" ]] || return 1
    done
    out="$("$BIN_DIR/kubectl" version --client 2>/dev/null)" || return 1
    [[ $'\n'"$out"$'\n' == *$'\n'"Client Version: $KUBE_VERSION"$'\n'* ]] || return 1
    out="$("$BIN_DIR/etcd" --version 2>/dev/null)" || return 1
    [[ $'\n'"$out"$'\n' == *$'\n'"etcd Version: ${want_etcd#v}"$'\n'* ]] || return 1
}

if installed_ok; then
    echo "${KUBE_CMDS[*]} $KUBE_VERSION and etcd $(sed -n 's/^etcd=//p' "$STAMP") already installed in $BIN_DIR"
    exit 0
fi

if ! command -v go >/dev/null 2>&1; then
    EXIT_CODE=2 die "the Go toolchain is required (kube-apiserver, kubectl and etcd are built from source)"
fi
command -v jq >/dev/null 2>&1 || EXIT_CODE=2 die "jq is required (apt-get install jq)"

started=$SECONDS
mkdir -p "$BIN_DIR" "$BUILD_DIR"
cd "$BUILD_DIR"

# 1. The pinned k8s.io/kubernetes go.mod, from the module proxy (or the module cache).
echo "install-kube: reading k8s.io/kubernetes@$KUBE_VERSION's go.mod with $(go version) ..."
# (Run outside the wrapper module, which may not be valid yet.) Errors come back in the JSON.
dl="$(cd / && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" 2>"$BUILD_DIR/download.err")" || true
kube_mod="$(jq -r '.GoMod // empty' <<<"$dl" 2>/dev/null || true)"
if [[ -z "$kube_mod" || ! -f "$kube_mod" ]]; then
    cat "$BUILD_DIR/download.err" >&2
    jq -r '.Error // empty' <<<"$dl" >&2 2>/dev/null || true
    EXIT_CODE=2 die "could not download k8s.io/kubernetes@$KUBE_VERSION from the Go module proxy ($(go env GOPROXY)); is it reachable, and is that version served?"
fi

mapfile -t staging < <(sed -nE 's#^[[:space:]]+(k8s\.io/[^[:space:]]+) v0\.0\.0([[:space:]].*)?$#\1#p' "$kube_mod" | sort -u)
if ((${#staging[@]} < 10)); then
    die "found only ${#staging[@]} k8s.io/* modules at v0.0.0 in $kube_mod; the go.mod layout changed?"
fi
go_directive="$(sed -nE 's/^go ([0-9.]+)$/\1/p' "$kube_mod")"
godebug_line="$(grep -E '^godebug ' "$kube_mod" || true)"
etcd_required="$(sed -nE 's#^[[:space:]]+go\.etcd\.io/etcd/server/v3 (v[^[:space:]]+).*$#\1#p' "$kube_mod")"
ETCD_VERSION="${ETCD_VERSION:-$etcd_required}"
[[ -n "$ETCD_VERSION" ]] || die "k8s.io/kubernetes@$KUBE_VERSION does not require go.etcd.io/etcd/server/v3; set ETCD_VERSION"
echo "install-kube: ${#staging[@]} staging modules -> $STAGING_VERSION; etcd $ETCD_VERSION"

# 2. The wrapper module. The go and godebug lines are copied so the binaries get the same
# language version and GODEBUG defaults as an upstream build (they are the main module's to set).
{
    echo "// Generated by scripts/install-kube.sh; do not edit."
    echo "module syncguard.local/kube-tools"
    echo
    echo "go ${go_directive:-1.24.0}"
    [[ -z "$godebug_line" ]] || { echo; echo "$godebug_line"; }
    echo
    echo "require ("
    echo "	k8s.io/kubernetes $KUBE_VERSION"
    echo "	go.etcd.io/etcd/server/v3 $ETCD_VERSION"
    echo ")"
    echo
    echo "replace ("
    for m in "${staging[@]}"; do
        echo "	$m v0.0.0 => $m $STAGING_VERSION"
    done
    echo ")"
} >go.mod.new
if ! cmp -s go.mod.new go.mod; then
    mv go.mod.new go.mod
    rm -f go.sum
else
    rm -f go.mod.new
fi

# 3. One `go build` for all three (they share most packages). -mod=mod lets go record go.sum
# entries (checked against the checksum database as usual). Version variables as upstream's
# hack/lib/version.sh sets them, so `kubectl version` and the API server's /version are right.
minor="${KUBE_VERSION#v1.}"
minor="${minor%%.*}"
pkg=k8s.io/component-base/version
cg=k8s.io/client-go/pkg/version
ldflags="-s -w"
for p in "$pkg" "$cg"; do
    ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ldflags+=" -X $p.buildDate=1970-01-01T00:00:00Z"
done

out="$BUILD_DIR/out"
rm -rf "$out"
mkdir -p "$out"
echo "install-kube: building ${KUBE_CMDS[*]} ($KUBE_VERSION) and etcd ($ETCD_VERSION); several minutes on a cold cache ..."
pkgs=()
for b in "${KUBE_CMDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
# -buildvcs=false: the wrapper module sits inside this git checkout, whose state is not theirs.
if ! CGO_ENABLED=0 GOFLAGS="-mod=mod -trimpath -buildvcs=false" go build -ldflags="$ldflags" -o "$out/" \
    "${pkgs[@]}" go.etcd.io/etcd/server/v3; then
    EXIT_CODE=1 die "go build failed (module proxy unreachable, or $KUBE_VERSION/$STAGING_VERSION not served?); wrapper module in $BUILD_DIR"
fi

# go names the etcd main package after its path (".../server/v3" -> "server").
mv "$out/server" "$out/etcd"
for b in "${KUBE_CMDS[@]}" etcd; do
    mv -f "$out/$b" "$BIN_DIR/$b"
done
printf 'kubernetes=%s\netcd=%s\ngo=%s\n' "$KUBE_VERSION" "$ETCD_VERSION" "$(go env GOVERSION)" >"$STAMP"

if ! installed_ok; then
    for b in kube-apiserver kube-controller-manager kube-scheduler etcd; do "$BIN_DIR/$b" --version 2>&1 | sed "s/^/  $b: /" >&2 || true; done
    "$BIN_DIR/kubectl" version --client 2>&1 | sed 's/^/  kubectl: /' >&2 || true
    die "the built binaries do not report kubernetes $KUBE_VERSION / etcd $ETCD_VERSION (above)"
fi
echo "install-kube: ${KUBE_CMDS[*]} $KUBE_VERSION and etcd $ETCD_VERSION installed in $BIN_DIR ($((SECONDS - started)) s)"
