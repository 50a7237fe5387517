#!/usr/bin/env bash
# Builds the helm and kustomize that Argo CD's repo-server runs, at the versions the pinned Argo CD
# release bundles (its hack/tool-versions.sh: v3.6.1 ships Helm 4.3.1 and Kustomize 5.8.3), and the
# jsonnet command of the go-jsonnet release it links as a library (its go.mod: v0.22.0), into
# .tools/render-bin (git-ignored). `syncguard render` runs whatever helm/kustomize/jsonnet it is
# given; the tests and the e2e referee (the real repo-server rendering the same sources) use these,
# so both sides run the same code.
#
# Argo CD's image downloads the release binaries; download sites cannot be reached here, so both are
# built from the Go module proxy. Helm's
# version is stamped as its release Makefile stamps it (`.Capabilities.HelmVersion` in templates
# reads it).
# kustomize 5.8.3's go.mod says `go 1.27.0`: GOTOOLCHAIN (RENDER_GOTOOLCHAIN, default go1.27.3) is
# taken from the proxy like any module. `helm version` prints no git commit (no release git data);
# rendering is unaffected.
#
# Idempotent: each binary is checked against its pinned version and rebuilt only when it differs.
# Exit codes: 0 installed (or already there), 2 cannot be built here (no Go, proxy unreachable),
# 1 anything else.
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v4.3.1}"
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.3}"
JSONNET_VERSION="${JSONNET_VERSION:-v0.22.0}"
RENDER_GOTOOLCHAIN="${RENDER_GOTOOLCHAIN:-go1.27.3}"
KUSTOMIZE_OPENAPI="${KUSTOMIZE_OPENAPI:-v0.0.0-20261014044854-ca3452a79603}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/render-bin"

die() {
    echo "install-render-tools: $*" >&2
    exit "${EXIT_CODE:-1}"
}

[[ "$HELM_VERSION" =~ ^v4\.[0-9]+\.[0-9]+$ ]] || die "HELM_VERSION must look like v4.3.1, got '$HELM_VERSION'"
[[ "$KUSTOMIZE_VERSION" =~ ^v5\.[0-9]+\.[0-9]+$ ]] || die "KUSTOMIZE_VERSION must look like v5.8.3, got '$KUSTOMIZE_VERSION'"
[[ "$JSONNET_VERSION" =~ ^v0\.[0-9]+\.[0-9]+$ ]] || die "JSONNET_VERSION must look like v0.22.0, got '$JSONNET_VERSION'"
command -v go >/dev/null 2>&1 || EXIT_CODE=2 die "go is required to build helm and kustomize from the module proxy"
mkdir -p "$BIN_DIR"

# The version a built helm answers: `v4.3.1` (plus nothing else, the build has no git data).
helm_has() { [[ -x "$BIN_DIR/helm" ]] && [[ "$("$BIN_DIR/helm" version --template '{{ .Version }}' 2>/dev/null)" == "$HELM_VERSION" ]]; }
# A `go install`ed kustomize prints `(devel)`, so its version comes from the module info Go embeds.
kustomize_has() {
    [[ -x "$BIN_DIR/kustomize" ]] && go version -m "$BIN_DIR/kustomize" 2>/dev/null \
        | awk '$1 == "mod" && $2 == "sigs.k8s.io/kustomize/kustomize/v5" { print $3 }' | grep -qx "$KUSTOMIZE_VERSION"
}

# `jsonnet --version` ends with the release's version.
jsonnet_has() { [[ -x "$BIN_DIR/jsonnet" ]] && "$BIN_DIR/jsonnet" --version 2>/dev/null | grep -q " $JSONNET_VERSION\$"; }

build() { # module@version [ldflags]
    local toolchain=local
    # Try the local Go first; a go directive newer than it ("requires go >= ...") means the proxy's
    # toolchain.
    if ! GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN="$BIN_DIR" GOFLAGS="-trimpath -buildvcs=false" \
        go install -ldflags="-s -w ${2:-}" "$1" 2>"$BIN_DIR/build.err"; then
        if grep -q 'requires go >=' "$BIN_DIR/build.err"; then
            toolchain="$RENDER_GOTOOLCHAIN"
            echo "install-render-tools: $1 needs a newer Go; building with GOTOOLCHAIN=$toolchain"
            GOTOOLCHAIN="$toolchain" CGO_ENABLED=0 GOBIN="$BIN_DIR" GOFLAGS="-trimpath -buildvcs=false" \
                go install -ldflags="-s -w ${2:-}" "$1" 2>"$BIN_DIR/build.err" && return 0
        fi
        if grep -qiE 'dial tcp|connection refused|no such host|proxy|404|410' "$BIN_DIR/build.err"; then
            cat "$BIN_DIR/build.err" >&2
            EXIT_CODE=2 die "could not fetch $1 from the Go module proxy"
        fi
        cat "$BIN_DIR/build.err" >&2
        die "go install $1 failed"
    fi
}

if helm_has; then
    echo "helm $HELM_VERSION already in $BIN_DIR"
else
    echo "install-render-tools: building helm $HELM_VERSION ..."
    build "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" \
        "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.metadata="
    helm_has || die "the built helm does not answer $HELM_VERSION: $("$BIN_DIR/helm" version 2>&1 || true)"
fi

if kustomize_has; then
    echo "kustomize $KUSTOMIZE_VERSION already in $BIN_DIR"
else
    # kustomize 5.8.3 asks for k8s.io/kube-openapi at a pseudo-version the proxy refuses (403), so
    # it cannot be `go install`ed: a wrapper module requires it and replaces that one module with
    # the nearest newer version the proxy serves (KUSTOMIZE_OPENAPI); kustomize's own code is the
    # release's. Its go directive (1.27) is met with GOTOOLCHAIN.
    echo "install-render-tools: building kustomize $KUSTOMIZE_VERSION (kube-openapi $KUSTOMIZE_OPENAPI) ..."
    mod="$ROOT/.tools/render-build/kustomize"
    mkdir -p "$mod"
    printf 'module syncguard.local/kustomize-build\n\ngo 1.27.0\n\nreplace k8s.io/kube-openapi => k8s.io/kube-openapi %s\n' \
        "$KUSTOMIZE_OPENAPI" >"$mod/go.mod"
    rm -f "$mod/go.sum"
    if ! (cd "$mod" && GOTOOLCHAIN="$RENDER_GOTOOLCHAIN" go get "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION") 2>"$BIN_DIR/build.err"; then
        cat "$BIN_DIR/build.err" >&2
        EXIT_CODE=2 die "could not fetch kustomize $KUSTOMIZE_VERSION (or GOTOOLCHAIN=$RENDER_GOTOOLCHAIN) from the Go module proxy"
    fi
    if ! (cd "$mod" && GOTOOLCHAIN="$RENDER_GOTOOLCHAIN" CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" \
        -o "$BIN_DIR/kustomize" sigs.k8s.io/kustomize/kustomize/v5) 2>"$BIN_DIR/build.err"; then
        cat "$BIN_DIR/build.err" >&2
        die "go build of kustomize $KUSTOMIZE_VERSION failed; wrapper module in $mod"
    fi
    kustomize_has || die "the built kustomize is not $KUSTOMIZE_VERSION"
fi
if jsonnet_has; then
    echo "jsonnet $JSONNET_VERSION already in $BIN_DIR"
else
    echo "install-render-tools: building jsonnet $JSONNET_VERSION ..."
    build "github.com/google/go-jsonnet/cmd/jsonnet@$JSONNET_VERSION"
    jsonnet_has || die "the built jsonnet is not $JSONNET_VERSION: $("$BIN_DIR/jsonnet" --version 2>&1 || true)"
fi
rm -f "$BIN_DIR/build.err"
echo "helm $HELM_VERSION, kustomize $KUSTOMIZE_VERSION and jsonnet $JSONNET_VERSION in $BIN_DIR"
