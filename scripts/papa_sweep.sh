#!/bin/bash
# papa_sweep.sh: PAPA sweeps on a batch cluster (docs/papa-op.md, "Shards on a cluster"): every model x task is
# one sweep split into shards, a Slurm job array runs one shard per task, and a merge job that depends on the
# array (afterok) joins each sweep's shards into the unsharded reply and all sweeps into one combined result.
#
#   scripts/papa_sweep.sh submit OUT_DIR MODELS TASKS PRESET SHARDS [PAPA_FLAG ...]
#       MODELS, TASKS: comma-separated model directories and built-in task ids (one sweep per pair);
#       PAPA_FLAGS: any `attnlab papa` flag, the same for every sweep (e.g. --seeds 1,2,3,4,5).
#       Plans OUT_DIR (`plan`), then submits the array and the merge job with sbatch; prints their job ids.
#   scripts/papa_sweep.sh plan   OUT_DIR MODELS TASKS PRESET SHARDS [PAPA_FLAG ...]
#       Writes one request per shard (OUT_DIR/<model>_<task>/request-<i>.json) and OUT_DIR/plan.tsv.
#   scripts/papa_sweep.sh shard  OUT_DIR [INDEX]
#       Runs array task INDEX (default $SLURM_ARRAY_TASK_ID, else a Kubernetes Indexed Job's
#       $JOB_COMPLETION_INDEX): sweep INDEX / SHARDS, shard INDEX mod SHARDS, as plan.tsv lists them.
#   scripts/papa_sweep.sh merge  OUT_DIR
#       Merges each sweep's parts into OUT_DIR/<model>_<task>/sweep.json, then every sweep into
#       OUT_DIR/combined.{json,csv,md} (scripts/papa_table.py --combined).
#
# Nothing is lost: a shard writes its part to a temporary file, syncs it and renames it, so a part is whole or
# absent; beside it, part-<i>.sha256 holds the digests of its request and of the part. A rerun (the same
# submit after a failed task) skips every part whose digests match and recomputes only the others. The merge
# names a sweep's missing or unverified part instead of merging, and papa_merge itself refuses a part of
# another request (settings, model or task hash) and a missing shard.
#
# Environment: ATTNLAB (the CLI; default `attnlab` on PATH, else build/native/attnlab beside this script),
# ATTNLAB_TASKS (the built-in tasks' folder; default build/data/tasks beside it), SWEEP_CPUS (CPUs per array
# task, default 2, also the CLI's --threads), SWEEP_SBATCH (more sbatch options for both jobs, e.g.
# "--partition=short --account=lab --time=2:00:00 --mem=8G"). Paths in the plan are absolute: OUT_DIR, the
# models and this script must be on a file system every node sees.
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)  # also when run through a symbolic link (the image)
self="$root/scripts/papa_sweep.sh"
cli=${ATTNLAB:-$(command -v attnlab || echo "$root/build/native/attnlab")}
tasks_dir=${ATTNLAB_TASKS:-$root/build/data/tasks}
cpus=${SWEEP_CPUS:-2}

die() { echo "papa_sweep: $*" >&2; exit 1; }
usage() { sed -n '4,17p' "$self" >&2; exit 2; }

# plan OUT MODELS TASKS PRESET SHARDS [FLAGS]: one request file per shard of every sweep, and plan.tsv (one
# line per sweep: its folder, model, task). Requests already there and identical are left as they are.
plan() {
  [ $# -ge 5 ] || usage
  local out=$1 models=$2 task_ids=$3 preset=$4 shards=$5
  shift 5
  [[ $shards =~ ^[1-9][0-9]*$ ]] || die "SHARDS is '$shards', not a positive whole number"
  [ -x "$cli" ] || die "no attnlab CLI at $cli (set ATTNLAB)"
  mkdir -p "$out/logs"
  out=$(cd "$out" && pwd)
  local plan_tmp="$out/plan.tsv.tmp.$$" model task dir name i req
  printf 'shards\t%s\n' "$shards" > "$plan_tmp"
  IFS=, read -ra model_list <<< "$models"
  IFS=, read -ra task_list <<< "$task_ids"
  for model in "${model_list[@]}"; do
    [ -f "$model/config.json" ] || die "model '$model' has no config.json"
    model=$(cd "$model" && pwd)
    for task in "${task_list[@]}"; do
      name="$(basename "$model")_$task"
      dir="$out/$name"
      mkdir -p "$dir"
      for ((i = 0; i < shards; i++)); do
        req="$dir/request-$i.json"
        "$cli" papa "$model" --task "$task" --tasks-dir "$tasks_dir" --preset "$preset" --shard "$i/$shards" \
          "$@" --request > "$req.tmp.$$"
        if cmp -s "$req.tmp.$$" "$req"; then rm -f "$req.tmp.$$"; else mv -f "$req.tmp.$$" "$req"; fi
      done
      printf 'sweep\t%s\t%s\t%s\n' "$name" "$model" "$task" >> "$plan_tmp"
    done
  done
  mv -f "$plan_tmp" "$out/plan.tsv"
  echo "$out"
}

n_shards() { awk -F'\t' '$1 == "shards" {print $2}' "$1/plan.tsv"; }
sweep_names() { awk -F'\t' '$1 == "sweep" {print $2}' "$1/plan.tsv"; }

# part_ok DIR I: 0 when part-I.json is whole and belongs to request-I.json as it is now (part-I.sha256 holds
# both files' SHA-256, written after the part was renamed into place).
part_ok() {
  local dir=$1 i=$2
  [ -f "$dir/part-$i.json" ] && [ -f "$dir/part-$i.sha256" ] || return 1
  [ "$(cat "$dir/part-$i.sha256")" = "$(part_digests "$dir" "$i")" ]
}
part_digests() {
  printf 'request %s\npart %s\n' "$(sha256sum < "$1/request-$2.json" | cut -d' ' -f1)" \
    "$(sha256sum < "$1/part-$2.json" | cut -d' ' -f1)"
}

# write_atomic FILE COMMAND...: COMMAND's output into FILE, whole or not at all (temporary file, fsync, rename,
# then the folder synced so the rename itself survives a crash).
write_atomic() {
  local file=$1 tmp
  shift
  tmp="$file.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  "$@" > "$tmp"
  sync "$tmp"
  mv -f "$tmp" "$file"
  sync "$(dirname "$file")"
  trap - EXIT
}

shard() {
  [ $# -ge 1 ] || usage
  local out=$1 index=${2:-${SLURM_ARRAY_TASK_ID:-${JOB_COMPLETION_INDEX:-}}}
  [ -f "$out/plan.tsv" ] || die "$out has no plan.tsv (run plan or submit first)"
  [[ $index =~ ^[0-9]+$ ]] || die "no array index (give INDEX, or run as a Slurm array task or an Indexed Job)"
  local shards names name dir i
  shards=$(n_shards "$out")
  mapfile -t names <<< "$(sweep_names "$out")"
  [ "$index" -lt $((${#names[@]} * shards)) ] || die "index $index is past the plan's ${#names[@]} x $shards shards"
  name=${names[$((index / shards))]}
  i=$((index % shards))
  dir="$out/$name"
  if part_ok "$dir" "$i"; then
    echo "papa_sweep: $name shard $i/$shards: part verified, skipped"
    return 0
  fi
  rm -f "$dir/part-$i.sha256"
  echo "papa_sweep: $name shard $i/$shards on $(hostname) ..."
  local start=$SECONDS
  write_atomic "$dir/part-$i.json" "$cli" --threads "$cpus" run "$dir/request-$i.json"
  write_atomic "$dir/part-$i.sha256" part_digests "$dir" "$i"
  echo "papa_sweep: $name shard $i/$shards done in $((SECONDS - start)) s"
}

merge() {
  [ $# -ge 1 ] || usage
  local out=$1 shards name dir i bad=() replies=()
  [ -f "$out/plan.tsv" ] || die "$out has no plan.tsv"
  shards=$(n_shards "$out")
  for name in $(sweep_names "$out"); do
    for ((i = 0; i < shards; i++)); do
      dir="$out/$name"
      if [ ! -f "$dir/part-$i.json" ]; then bad+=("$name: part-$i.json (shard $i/$shards) is missing")
      elif ! part_ok "$dir" "$i"; then bad+=("$name: part-$i.json (shard $i/$shards) does not match its digests in part-$i.sha256")
      fi
    done
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'papa_sweep: not merged: %s\n' "${bad[@]}" >&2
    echo "papa_sweep: submit the same command again: verified parts are skipped, the others recomputed" >&2
    exit 1
  fi
  for name in $(sweep_names "$out"); do
    dir="$out/$name"
    local parts=()
    for ((i = 0; i < shards; i++)); do parts+=("$dir/part-$i.json"); done
    # one part alone is already the whole sweep; papa_merge still recomputes its summary and findings
    jq -s '{op: "papa_merge", parts: .}' "${parts[@]}" > "$dir/merge.json"
    write_atomic "$dir/sweep.json" "$cli" run "$dir/merge.json"
    rm -f "$dir/merge.json"
    echo "papa_sweep: $name: $(jq -r .digest "$dir/sweep.json")"
    replies+=("$dir/sweep.json")
  done
  python3 "$root/scripts/papa_table.py" --combined "$out/combined" "${replies[@]}"
  echo "papa_sweep: $out/combined.json, combined.csv, combined.md"
}

submit() {
  command -v sbatch >/dev/null || die "no sbatch on PATH (Slurm's client commands)"
  local out shards n array merge_job
  out=$(plan "$@")
  shards=$(n_shards "$out")
  n=$(sweep_names "$out" | wc -l)
  # shellcheck disable=SC2086
  array=$(sbatch --parsable ${SWEEP_SBATCH:-} --job-name=papa-shards --array="0-$((n * shards - 1))" \
    --cpus-per-task="$cpus" --output="$out/logs/shard-%a.log" --wrap="'$self' shard '$out'")
  array=${array%%;*}
  # shellcheck disable=SC2086
  merge_job=$(sbatch --parsable ${SWEEP_SBATCH:-} --job-name=papa-merge --dependency="afterok:$array" \
    --kill-on-invalid-dep=yes --cpus-per-task=1 --output="$out/logs/merge.log" --wrap="'$self' merge '$out'")
  merge_job=${merge_job%%;*}
  printf 'array %s\nmerge %s\n' "$array" "$merge_job" | tee "$out/jobs.txt"
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  plan) plan "$@" >/dev/null ;;
  submit) submit "$@" ;;
  shard) shard "$@" ;;
  merge) merge "$@" ;;
  *) usage ;;
esac
