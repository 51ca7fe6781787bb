#!/bin/bash
# build_image.sh: the OCI container image that runs PAPA sweeps anywhere (Kubernetes, podman, a cluster's
# container runtime): Debian 12's essential packages, jq and python3 from Debian's archive (mmdebstrap, no
# registry image), the native CLI, the embedded models, the built-in tasks and scripts/papa_sweep.sh with
# scripts/papa_table.py, under /opt/attnlab in the repository's layout, so the sweep script finds them as it
# does in a checkout. docs/papa-op.md runs it as a Kubernetes Indexed Job.
#
#   scripts/build_image.sh OUT_DIR [TAG]     (TAG default attnlab:latest; must run as root)
#
# Writes OUT_DIR/debian-bookworm.tar (the Debian root file system, kept for the next build), OUT_DIR/oci (an OCI
# image layout, what `umoci unpack` and `skopeo copy oci:...` read) and
# OUT_DIR/attnlab.oci.tar (the same as one archive, for `podman load -i` and `skopeo copy oci-archive:...`), and
# prints the image's size. Needs the native build (AL_BUILD_DIR, default build/native) and build/data/tasks.
# MIRROR overrides the Debian mirror (default http://deb.debian.org/debian).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/build_image.sh OUT_DIR [TAG]}
tag=${2:-attnlab:latest}
name=${tag%%:*}
version=${tag#*:}
[ "$name" != "$tag" ] || version=latest
cli="$root/${AL_BUILD_DIR:-build/native}/attnlab"
mirror=${MIRROR:-http://deb.debian.org/debian}
[ -x "$cli" ] || { echo "build_image: no native CLI at $cli" >&2; exit 2; }
[ -f "$root/build/data/tasks/pos.jsonl" ] || { echo "build_image: no built-in tasks in build/data/tasks" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "build_image: run as root (mmdebstrap and umoci keep the files' owners)" >&2; exit 2; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# What goes into /opt/attnlab: the repository's layout, only what a sweep reads.
stage="$work/attnlab"
mkdir -p "$stage/build/native" "$stage/build/data" "$stage/scripts" "$stage/models"
cp "$cli" "$stage/build/native/attnlab"
strip "$stage/build/native/attnlab"
cp -r "$root/build/data/tasks" "$stage/build/data/tasks"
cp "$root/scripts/papa_sweep.sh" "$root/scripts/papa_table.py" "$stage/scripts/"
for m in "$root"/models/*/; do
  [ -f "$m/config.json" ] && cp -r "${m%/}" "$stage/models/"
done
cp "$root/models/README.md" "$stage/models/" 2>/dev/null || true

# The Debian layer: a bookworm root file system of the essential packages with jq and python3, from Debian's
# archive; documentation and locales left out (nothing here reads them). Kept in OUT_DIR/debian-bookworm.tar
# (delete it to fetch Debian's current packages), so a new CLI rebuilds only the attnlab layer.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}
base="$out/debian-bookworm.tar"
if [ ! -f "$base" ]; then
  mmdebstrap --quiet --variant=essential --include=jq,python3 \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' bookworm "$work/base.tar" "$mirror"
  mv -f "$work/base.tar" "$base"
fi
mkdir -p "$work/rootfs" "$work/links"
tar -C "$work/rootfs" -xf "$base"
ln -s /opt/attnlab/build/native/attnlab "$work/links/attnlab"
ln -s /opt/attnlab/scripts/papa_sweep.sh "$work/links/papa_sweep.sh"

# Two layers (Debian, then attnlab under /opt/attnlab with its commands in /usr/local/bin), and the
# configuration a runtime reads.
rm -rf "$out/oci"
umoci init --layout "$out/oci"
umoci new --image "$out/oci:$version"
umoci insert --image "$out/oci:$version" --history.created_by "mmdebstrap --variant=essential --include=jq,python3 bookworm" \
  "$work/rootfs" /
umoci insert --image "$out/oci:$version" --history.created_by "scripts/build_image.sh: attnlab in /opt/attnlab" \
  "$stage" /opt/attnlab
umoci insert --image "$out/oci:$version" --history.created_by "scripts/build_image.sh: attnlab's commands" \
  "$work/links" /usr/local/bin
umoci config --image "$out/oci:$version" --author attnlab --os linux --architecture amd64 \
  --config.env PATH=/usr/local/bin:/usr/bin:/bin --config.env ATTNLAB_TASKS=/opt/attnlab/build/data/tasks \
  --config.workingdir /opt/attnlab --config.cmd attnlab --config.cmd --help \
  --config.label org.opencontainers.image.title=attnlab \
  --config.label "org.opencontainers.image.description=attnlab's native CLI, embedded models and tasks, papa_sweep.sh"
umoci gc --layout "$out/oci"
# the layout as one archive, with the tag a runtime shows (podman load names the image by it)
jq --arg ref "$name:$version" '.manifests[0].annotations["org.opencontainers.image.ref.name"] = $ref' \
  "$out/oci/index.json" > "$work/index.json"
mkdir -p "$work/archive" && cp -r "$out/oci/." "$work/archive/" && cp "$work/index.json" "$work/archive/index.json"
tar -C "$work/archive" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 -cf "$out/attnlab.oci.tar.tmp" .
mv -f "$out/attnlab.oci.tar.tmp" "$out/attnlab.oci.tar"

unpacked=$(( $(du -sb "$work/rootfs" | cut -f1) + $(du -sb "$stage" | cut -f1) ))
packed=$(du -sb "$out/oci/blobs" | cut -f1)
printf 'build_image: %s: %s compressed (OCI layout %s, archive %s), %s unpacked\n' "$tag" \
  "$(numfmt --to=iec --suffix=B "$packed")" "$out/oci" "$out/attnlab.oci.tar" "$(numfmt --to=iec --suffix=B "$unpacked")"
