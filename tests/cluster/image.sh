#!/bin/bash
# image.sh: the container image (scripts/build_image.sh) runs a PAPA sweep to the host's digest. The sweep runs
# as the Kubernetes Indexed Job of docs/papa-op.md runs it: `papa_sweep.sh plan` once, then
# `papa_sweep.sh shard /out` with JOB_COMPLETION_INDEX 0..3 in four containers sharing /out, then
# `papa_sweep.sh merge /out`. With podman when it can run containers here (its own storage in the state
# folder), otherwise in the image's root file system unpacked by umoci (chroot).
# The image is built into build/image once, and again when the CLI, the scripts or the models are newer.
# Skips (exit 77, with the reason) only when this is not root or mmdebstrap or umoci is missing.
#
#   tests/cluster/image.sh
# Environment: AL_BUILD_DIR (the native build, default build/native).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli="$root/${AL_BUILD_DIR:-build/native}/attnlab"
image="$root/build/image"

skip() { echo "image test: SKIPPED: $*"; exit 77; }
fail() { echo "image test: FAILED: $*" >&2; exit 1; }
for p in mmdebstrap umoci jq; do
  command -v "$p" >/dev/null || skip "no '$p' on PATH (scripts/setup.sh installs mmdebstrap, umoci and jq)"
done
[ "$(id -u)" = 0 ] || skip "building the image (mmdebstrap) and running it without podman (chroot) need root"
[ -x "$cli" ] || fail "no native CLI at $cli"

if [ ! -f "$image/attnlab.oci.tar" ] || [ -n "$(find "$cli" "$root/scripts/papa_sweep.sh" "$root/scripts/papa_table.py" \
     "$root/scripts/build_image.sh" "$root/models" "$root/build/data/tasks" -newer "$image/attnlab.oci.tar" -print -quit)" ]; then
  start=$SECONDS
  "$root/scripts/build_image.sh" "$image" | tee "$image.log" || fail "scripts/build_image.sh failed"
  echo "image test: built in $((SECONDS - start)) s"
fi
echo "image test: image $(du -sh "$image/oci/blobs" | cut -f1) compressed, archive $(du -sh "$image/attnlab.oci.tar" | cut -f1)"

state=$(mktemp -d /tmp/attnlab-image.XXXXXX)
podman_args=(--root "$state/storage" --runroot "$state/run" --storage-driver vfs)
cleanup() {
  local rc=$?
  if [ -n "${use_podman:-}" ]; then podman "${podman_args[@]}" rm -af >/dev/null 2>&1 || true; fi
  rm -rf "$state"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

source "$root/tests/cluster/tiny_sweep.sh"
flags=("${tiny_sweep_flags[@]}")
reference=$("$cli" --threads 1 papa "$root/models/attnlab-mini-bert" --task pos --tasks-dir "$root/build/data/tasks" \
  "${flags[@]}" | jq -r .digest)
echo "image test: host digest $reference"

# in_image [ENV=VALUE ...] -- COMMAND...: COMMAND in a container of the image, /out (here $out) shared between them
out="$state/out"
mkdir -p "$out"
use_podman=
if command -v podman >/dev/null && podman "${podman_args[@]}" load -q -i "$image/attnlab.oci.tar" >/dev/null 2>"$state/podman.txt" &&
   podman "${podman_args[@]}" run --rm --network none attnlab:latest attnlab --version >/dev/null 2>>"$state/podman.txt"; then
  use_podman=1
  how="podman $(podman --version | cut -d' ' -f3)"
  in_image() {
    local env=()
    while [ "$1" != -- ]; do env+=(-e "$1"); shift; done
    shift
    podman "${podman_args[@]}" run --rm --network none "${env[@]}" -v "$state/out:/out" attnlab:latest "$@"
  }
else
  how="umoci unpack + chroot (podman: $(tail -n1 "$state/podman.txt" 2>/dev/null || echo 'not installed'))"
  umoci unpack --image "$image/oci:latest" "$state/bundle" >/dev/null
  rootfs="$state/bundle/rootfs"
  out="$rootfs/out"
  mkdir -p "$out"
  in_image() {
    local env=(PATH=/usr/local/bin:/usr/bin:/bin ATTNLAB_TASKS=/opt/attnlab/build/data/tasks HOME=/root)
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    chroot "$rootfs" /usr/bin/env -i "${env[@]}" /bin/sh -c 'cd /opt/attnlab && exec "$@"' sh "$@"
  }
fi
echo "image test: running the image with $how"

start=$SECONDS
in_image -- papa_sweep.sh plan /out /opt/attnlab/models/attnlab-mini-bert pos quick 4 "${flags[@]}" ||
  fail "plan in the image failed"
for i in 0 1 2 3; do
  in_image JOB_COMPLETION_INDEX=$i SWEEP_CPUS=1 -- papa_sweep.sh shard /out > "$state/shard-$i.txt" 2>&1 ||
    fail "shard $i in the image failed: $(cat "$state/shard-$i.txt")"
done
in_image -- papa_sweep.sh merge /out > "$state/merge.txt" 2>&1 || fail "merge in the image failed: $(cat "$state/merge.txt")"
digest=$(jq -r .digest "$out/attnlab-mini-bert_pos/sweep.json")
[ "$digest" = "$reference" ] || fail "the image's digest $digest is not the host's $reference"
echo "image test: 4 shards (Indexed Job indexes) and the merge in the image: $((SECONDS - start)) s, digest $digest (= host)"
echo "image test: passed"
