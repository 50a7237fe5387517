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
REVIEW=false
TOOLS=""

usage() {
    cat <<EOF
Usage: scripts/build-image.sh [--binary PATH] [--out PATH] [--source URL]
                              [--review [--render-tools DIR]]

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
  --review        the image for CI jobs that review pull/merge requests (the GitLab template's
                  default image) instead: syncguard plus helm, kustomize and jsonnet as Argo CD
                  3.6's repo-server runs them, the job scripts in /opt/syncguard/integrations,
                  and what they run (bash as /bin/sh, git with its https helper, python3 and
                  its standard library, coreutils, sed, grep, awk, tar, gzip), all taken with
                  their shared libraries from this machine's Debian; user root (a CI checkout
                  belongs to the runner), no entrypoint, SYNCGUARD, SYNCGUARD_HELM,
                  SYNCGUARD_KUSTOMIZE and SYNCGUARD_JSONNET set. Default archive:
                  target/oci/syncguard-review-$VERSION.oci.tar; scripts/run-review-image.sh
                  runs the GitLab job in it.
  --render-tools DIR  with --review: where helm, kustomize and jsonnet are (default
                  .tools/render-bin, built by scripts/install-render-tools.sh when missing).

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
        --review) REVIEW=true; shift ;;
        --render-tools) TOOLS="${2:?--render-tools needs a directory}"; shift 2 ;;
        --render-tools=*) TOOLS="${1#*=}"; shift ;;
        *) echo "build-image: unknown argument '$1' (see --help)" >&2; exit 1 ;;
    esac
done
if [[ "$REVIEW" == true ]]; then
    OUT="${OUT:-$ROOT/target/oci/syncguard-review-$VERSION.oci.tar}"
    if [[ -z "$TOOLS" ]]; then
        TOOLS="$ROOT/.tools/render-bin"
        for t in helm kustomize jsonnet; do
            [[ -x "$TOOLS/$t" ]] || { "$ROOT/scripts/install-render-tools.sh" || exit $?; break; }
        done
    fi
    for t in helm kustomize jsonnet; do
        [[ -x "$TOOLS/$t" ]] || { echo "build-image: $TOOLS/$t is missing (give --render-tools DIR)" >&2; exit 1; }
    done
else
    OUT="${OUT:-$ROOT/target/oci/syncguard-$VERSION.oci.tar}"
fi

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

# add_program PATH [AS]: a program of this machine at PATH (or AS) in the image, with the shared
# libraries it links, each at the path the loader looks for it.
add_program() {
    local from="$1" to="${2:-$1}" lib
    mkdir -p "$RFS$(dirname "$to")"
    install -m 0755 "$(readlink -f "$from")" "$RFS$to"
    if ldd "$from" >/dev/null 2>&1; then
        if ldd "$from" | grep -q 'not found'; then
            ldd "$from" >&2
            echo "build-image: cannot resolve the shared libraries of $from on this machine" >&2
            exit 1
        fi
        for lib in $(ldd "$from" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
            [[ -e "$RFS$lib" ]] && continue
            mkdir -p "$RFS$(dirname "$lib")"
            install -m 0755 "$(readlink -f "$lib")" "$RFS$lib"
        done
    fi
}

if [[ "$REVIEW" == true ]]; then
    for t in helm kustomize jsonnet; do install -m 0755 "$(readlink -f "$TOOLS/$t")" "$RFS/usr/local/bin/$t"; done
    # What the job scripts run (integrations/gitlab/job.sh, review.sh, upsert-comment.py) and
    # what a CI job's own script lines usually need. Debian's, not a user's (pyenv, asdf).
    for p in bash git sed grep awk tar gzip find sha256sum mktemp cat mkdir rm mv cp cut \
        tr head tail sort uniq wc dirname basename env date ls chmod ln readlink tee xargs sleep \
        id uname stat touch; do
        path="$(PATH=/usr/bin:/bin command -v "$p")" || { echo "build-image: $p is needed for --review and is not in /usr/bin" >&2; exit 2; }
        add_program "$path" "/usr/bin/$p"
    done
    mkdir -p "$RFS/bin"
    ln -s /usr/bin/bash "$RFS/bin/bash"
    ln -s /usr/bin/bash "$RFS/bin/sh"
    # git runs its https transport as a separate program (a fetch of the base commit).
    for helper in git-remote-http git-remote-https; do
        if [[ -x "/usr/lib/git-core/$helper" ]]; then add_program "/usr/lib/git-core/$helper"; fi
    done
    # Debian's python3, its standard library and its compiled modules (with their libraries),
    # without the parts no script here imports (tests, IDLE, Tk, 2to3, pip's bootstrap).
    [[ -x /usr/bin/python3 ]] || need python3 python3-minimal
    py="$(readlink -f /usr/bin/python3)"
    pyver="$(basename "$py")"
    pylib="/usr/lib/$pyver"
    [[ -d "$pylib" ]] || { echo "build-image: $pylib is missing (Debian's python3 is needed for --review)" >&2; exit 2; }
    mkdir -p "$RFS$pylib"
    tar -C "$pylib" --exclude=./test --exclude=./idlelib --exclude=./tkinter --exclude=./turtledemo \
        --exclude=./lib2to3 --exclude=./ensurepip --exclude='./config-*' --exclude='__pycache__' \
        --exclude=./site-packages --exclude=./dist-packages -cf - . | tar -C "$RFS$pylib" -xf -
    for so in "$RFS$pylib"/lib-dynload/*.so; do
        [[ -e "$so" ]] || continue
        add_program "$pylib/lib-dynload/$(basename "$so")"
    done
    add_program "$py" "/usr/bin/$pyver"
    ln -sf "$pyver" "$RFS/usr/bin/python3"
    mkdir -p "$RFS/opt/syncguard/integrations/gitlab" "$RFS/root"
    for f in integrations/review.sh integrations/install.sh integrations/upsert-comment.py integrations/gitlab/job.sh; do
        install -m 0755 "$ROOT/$f" "$RFS/opt/syncguard/$f"
    done
    # install.sh reads the version of the scripts' checkout.
    install -m 0644 "$ROOT/Cargo.toml" "$RFS/opt/syncguard/Cargo.toml"
    # A CI checkout belongs to the runner's user, not to the job's: git refuses such a
    # repository unless told it is safe.
    printf '[safe]\n\tdirectory = *\n' >"$RFS/etc/gitconfig"
fi
if [[ "$REVIEW" == true ]]; then
    printf 'root:x:0:0:root:/root:/bin/bash\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' >"$RFS/etc/passwd"
else
    cat >"$RFS/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/:/sbin/nologin
EOF
fi
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
[[ ! -f "$RFS/etc/gitconfig" ]] || chmod 0644 "$RFS/etc/gitconfig"
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
# The review image holds helm, kustomize and python: -6 packs it in a third of the time.
if [[ "$REVIEW" == true ]]; then gzip -n -6 "$WORK/layer.tar"; else gzip -n -9 "$WORK/layer.tar"; fi
layer="$(blob "$WORK/layer.tar.gz" application/vnd.oci.image.layer.v1.tar+gzip)"

labels="$(jq -cn --arg src "$SOURCE_URL" --arg v "$VERSION" --arg rev "$REVISION" --arg c "$CREATED" '{
    "org.opencontainers.image.source": $src,
    "org.opencontainers.image.version": $v,
    "org.opencontainers.image.revision": $rev,
    "org.opencontainers.image.created": $c,
    "org.opencontainers.image.title": "syncguard",
    "org.opencontainers.image.description": "Argo CD admission webhook, CLI and reconciler"}')"
if [[ "$REVIEW" == true ]]; then
    labels="$(jq -c '. + {"org.opencontainers.image.title": "syncguard-review",
        "org.opencontainers.image.description": "syncguard review for CI jobs, with the render tools Argo CD runs"}' <<<"$labels")"
    process='{
        "User": "0:0",
        "Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
              "HOME=/root", "SYNCGUARD=/usr/local/bin/syncguard", "SYNCGUARD_HELM=/usr/local/bin/helm",
              "SYNCGUARD_KUSTOMIZE=/usr/local/bin/kustomize", "SYNCGUARD_JSONNET=/usr/local/bin/jsonnet",
              "SYNCGUARD_HOME=/opt/syncguard"],
        "Cmd": ["/bin/bash"],
        "WorkingDir": "/"}'
else
    process='{
        "User": "65532:65532",
        "Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
        "Entrypoint": ["/usr/local/bin/syncguard"],
        "WorkingDir": "/"}'
fi
jq -cn --arg c "$CREATED" --arg arch "$ARCH" --arg diff "$diff_id" --argjson labels "$labels" \
    --argjson process "$process" '{
    created: $c, architecture: $arch, os: "linux",
    config: ($process + {Labels: $labels}),
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
