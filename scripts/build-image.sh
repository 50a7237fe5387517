#!/usr/bin/env bash
# Builds the syncguard OCI image without a Docker daemon or a base image: the release binary, the
# shared libraries it links (from this machine's Debian, found with ldd), /etc/passwd and
# /etc/group with the non-root user 65532, /etc/nsswitch.conf, the CA bundle and an empty /tmp,
# as one reproducible layer, written as an OCI image layout packed in a tar (an "oci-archive",
# what `skopeo copy oci-archive:...` and `podman load` read). See --help.
#
# Reproducible: the same binary and the same libraries give the same digest (sorted tar entries,
# numeric owners 0/65532, every mtime and the config's "created" set to SOURCE_DATE_EPOCH, which
# defaults to the time of the HEAD commit; gzip without name or time stamp).
# Exit 2 when a tool it needs is missing and cannot be installed from Debian here, 1 on any
# other failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -1)"
SOURCE_URL="${IMAGE_SOURCE:-https://github.com/syncguard/syncguard}"
BINARY=""
OUT=""

usage() {
    cat <<EOF
Usage: scripts/build-image.sh [--binary PATH] [--out PATH] [--source URL]

Builds the image the Helm chart runs (charts/syncguard: both Deployments use the \`syncguard\`
entrypoint) without a Docker daemon, a registry or a base image, and writes it as an OCI archive
(an OCI image layout in a tar). Its manifest digest is printed and written beside the archive.

  --binary PATH   put this syncguard binary in the image instead of building one with
                  \`cargo build --release --locked --bin syncguard\`. It must run on this
                  machine: its shared libraries are taken from here (ldd).
  --out PATH      the archive (default: target/oci/syncguard-$VERSION.oci.tar); the digest
                  goes to PATH.digest ("sha256:...").
  --source URL    org.opencontainers.image.source label (default \$IMAGE_SOURCE or
                  $SOURCE_URL).

The image: one layer holding /usr/local/bin/syncguard, the libraries ldd names (libc, libm,
libgcc_s, the dynamic loader), /etc/passwd and /etc/group (root and nonroot 65532),
/etc/nsswitch.conf, /etc/ssl/certs/ca-certificates.crt (read by the Kubernetes client only when
a kubeconfig names no CA) and /tmp; config User 65532:65532, Entrypoint
["/usr/local/bin/syncguard"], labels org.opencontainers.image.{source,version,revision}
(revision: \`git rev-parse HEAD\`). No shell, no package manager.

SOURCE_DATE_EPOCH (default: the HEAD commit's time, else 0) fixes every timestamp, so two builds
of the same binary give the same digest.

Then, for example:
  scripts/run-image.sh                       # run it with runc: serve over TLS, check examples/
  skopeo copy oci-archive:target/oci/syncguard-$VERSION.oci.tar \\
      docker://REGISTRY/syncguard:$VERSION    # push (needs registry credentials)
  podman load -i target/oci/syncguard-$VERSION.oci.tar

Exit codes: 0 built; 1 failure; 2 a required tool is missing and cannot be installed here.
EOF
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --binary) BINARY="${2:?--binary needs a path}"; shift 2 ;;
        --binary=*) BINARY="${1#*=}"; shift ;;
        --out) OUT="${2:?--out needs a path}"; shift 2 ;;
        --out=*) OUT="${1#*=}"; shift ;;
        --source) SOURCE_URL="${2:?--source needs a URL}"; shift 2 ;;
        --source=*) SOURCE_URL="${1#*=}"; shift ;;
        *) echo "build-image: unknown argument '$1' (see --help)" >&2; exit 1 ;;
    esac
done
OUT="${OUT:-$ROOT/target/oci/syncguard-$VERSION.oci.tar}"

# need COMMAND PACKAGE: install PACKAGE from Debian when COMMAND is missing (root + apt-get only).
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "build-image: installing $2 from Debian ..."
        if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null 2>&1 \
                && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null; }; then
            command -v "$1" >/dev/null 2>&1 && return 0
        fi
    fi
    echo "build-image: $1 is required (apt-get install $2) and could not be installed" >&2
    exit 2
}
need tar tar
need gzip gzip
need sha256sum coreutils
need ldd libc-bin
need jq jq
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
[[ -f "$CA_BUNDLE" ]] || need update-ca-certificates ca-certificates
[[ -f "$CA_BUNDLE" ]] || { echo "build-image: $CA_BUNDLE is missing (package ca-certificates)" >&2; exit 2; }
tar --version | grep -q 'GNU tar' || { echo "build-image: GNU tar is required (--sort, --mtime)" >&2; exit 2; }

case "$(uname -m)" in
    x86_64) ARCH=amd64 ;;
    aarch64) ARCH=arm64 ;;
    *) echo "build-image: unsupported architecture $(uname -m)" >&2; exit 1 ;;
esac

if [[ -z "$BINARY" ]]; then
    echo "build-image: cargo build --release --locked --bin syncguard ..."
    (cd "$ROOT" && cargo build --release --locked --bin syncguard)
    BINARY="$ROOT/target/release/syncguard"
fi
[[ -x "$BINARY" ]] || { echo "build-image: $BINARY is not an executable" >&2; exit 1; }
REVISION="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}"
CREATED="$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
RFS="$WORK/rootfs"
LAYOUT="$WORK/layout"
mkdir -p "$RFS/usr/local/bin" "$RFS/etc/ssl/certs" "$RFS/tmp" "$LAYOUT/blobs/sha256"

# --- the root filesystem -------------------------------------------------------------------
install -m 0755 "$BINARY" "$RFS/usr/local/bin/syncguard"
# Each library at the path the loader looks for it (ldd prints it; the loader itself is the
# absolute path after the "=>"-less line), with the file's content (symlinks resolved).
libs="$(ldd "$BINARY" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)"
if [[ -z "$libs" ]] || ldd "$BINARY" | grep -q 'not found'; then
    ldd "$BINARY" >&2 || true
    echo "build-image: cannot resolve the shared libraries of $BINARY on this machine" >&2
    exit 1
fi
for lib in $libs; do
    mkdir -p "$RFS$(dirname "$lib")"
    install -m 0755 "$(readlink -f "$lib")" "$RFS$lib"
done
cat >"$RFS/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/:/sbin/nologin
EOF
cat >"$RFS/etc/group" <<'EOF'
root:x:0:
nonroot:x:65532:
EOF
# glibc's resolver: /etc/hosts (Kubernetes writes it) before DNS.
cat >"$RFS/etc/nsswitch.conf" <<'EOF'
passwd: files
group: files
hosts: files dns
EOF
# rustls-native-certs reads it when a kubeconfig gives no CA (in-cluster config always does).
install -m 0644 "$CA_BUNDLE" "$RFS/etc/ssl/certs/ca-certificates.crt"
find "$RFS" -type d -exec chmod 0755 {} +
chmod 0644 "$RFS/etc/passwd" "$RFS/etc/group" "$RFS/etc/nsswitch.conf"
chmod 1777 "$RFS/tmp"

# --- the OCI image layout ------------------------------------------------------------------
# tar_sorted DIR OUT [PATH...]: a byte-reproducible tar of PATHs (default: all) of DIR, every
# entry owned by 0:0 with mode bits as they are (set above) and mtime SOURCE_DATE_EPOCH.
tar_sorted() {
    local dir="$1" out="$2"
    shift 2
    [[ $# -gt 0 ]] || set -- .
    tar -C "$dir" --sort=name --format=posix \
        --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
        --mtime="@$EPOCH" --numeric-owner --owner=0 --group=0 -cf "$out" "$@"
}
# blob FILE MEDIATYPE: moves FILE into blobs/sha256 and prints its descriptor as JSON.
blob() {
    local sum size
    sum="$(sha256sum "$1" | cut -d' ' -f1)"
    size="$(stat -c %s "$1")"
    mv "$1" "$LAYOUT/blobs/sha256/$sum"
    jq -cn --arg m "$2" --arg d "sha256:$sum" --argjson s "$size" '{mediaType: $m, digest: $d, size: $s}'
}

tar_sorted "$RFS" "$WORK/layer.tar"
diff_id="sha256:$(sha256sum "$WORK/layer.tar" | cut -d' ' -f1)"
gzip -n -9 "$WORK/layer.tar"
layer="$(blob "$WORK/layer.tar.gz" application/vnd.oci.image.layer.v1.tar+gzip)"

labels="$(jq -cn --arg src "$SOURCE_URL" --arg v "$VERSION" --arg rev "$REVISION" --arg c "$CREATED" '{
    "org.opencontainers.image.source": $src,
    "org.opencontainers.image.version": $v,
    "org.opencontainers.image.revision": $rev,
    "org.opencontainers.image.created": $c,
    "org.opencontainers.image.title": "syncguard",
    "org.opencontainers.image.description": "Argo CD admission webhook, CLI and reconciler"}')"
jq -cn --arg c "$CREATED" --arg arch "$ARCH" --arg diff "$diff_id" --argjson labels "$labels" '{
    created: $c, architecture: $arch, os: "linux",
    config: {
        User: "65532:65532",
        Env: ["PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
        Entrypoint: ["/usr/local/bin/syncguard"],
        WorkingDir: "/",
        Labels: $labels},
    rootfs: {type: "layers", diff_ids: [$diff]},
    history: [{created: $c, created_by: "scripts/build-image.sh"}]}' >"$WORK/config.json"
config="$(blob "$WORK/config.json" application/vnd.oci.image.config.v1+json)"

jq -cn --argjson config "$config" --argjson layer "$layer" --argjson labels "$labels" '{
    schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: $config, layers: [$layer], annotations: $labels}' >"$WORK/manifest.json"
manifest="$(blob "$WORK/manifest.json" application/vnd.oci.image.manifest.v1+json)"
digest="$(jq -r .digest <<<"$manifest")"

# The tag is the ref name: `umoci unpack --image DIR:$VERSION`, `oci-archive:FILE:$VERSION`.
jq -cn --argjson m "$manifest" --arg v "$VERSION" --arg arch "$ARCH" '{
    schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [$m + {annotations: {"org.opencontainers.image.ref.name": $v},
                      platform: {architecture: $arch, os: "linux"}}]}' >"$LAYOUT/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$LAYOUT/oci-layout"
find "$LAYOUT" -type d -exec chmod 0755 {} +
find "$LAYOUT" -type f -exec chmod 0644 {} +

mkdir -p "$(dirname "$OUT")"
tar_sorted "$LAYOUT" "$OUT.partial" oci-layout index.json blobs
mv "$OUT.partial" "$OUT"
echo "$digest" >"$OUT.digest"
echo "build-image: syncguard $VERSION ($ARCH, revision $REVISION)"
echo "build-image: $OUT ($(stat -c %s "$OUT") bytes; layer $(jq -r .size <<<"$layer") bytes gzip)"
echo "build-image: manifest digest (also in $OUT.digest):"
echo "$digest"
