# model_runs.sh: what scripts/papa_models.sh and scripts/agreement_models.sh share, sourced by both: the CLI,
# the built-in task list, and a resumable run (a reply already written is kept, so an interrupted batch
# starts where it stopped).

# model_runs_cli NAME: the CLI's path (AL_BUILD_DIR, default build/native), or exit naming the caller.
model_runs_cli() {
  local cli=${AL_BUILD_DIR:-build/native}/attnlab
  [ -x "$cli" ] || { echo "$1: no CLI at $cli (run scripts/test.sh or cmake --build build/native)" >&2; exit 2; }
  echo "$cli"
}

# model_runs_tasks CLI: the built-in tasks, the engine's table as its "version" reply lists them (docs/tasks.md).
model_runs_tasks() {
  echo '{"op": "version"}' | "$1" run - | python3 -c 'import json, sys; print(" ".join(t["id"] for t in json.load(sys.stdin)["tasks"]))'
}

# model_runs_reply NAME REPLY COMMAND...: runs COMMAND into REPLY (its stderr into REPLY's .log) unless REPLY
# exists; a run cut short leaves only REPLY.part.
model_runs_reply() {
  local caller=$1 reply=$2 start
  shift 2
  [ -s "$reply" ] && return 0
  echo "$caller: $(basename "$reply" .json) ..." >&2
  start=$(date +%s)
  "$@" > "$reply.part" 2> "${reply%.json}.log"
  mv "$reply.part" "$reply"
  echo "$caller: $(basename "$reply" .json) done in $(( $(date +%s) - start )) s" >&2
}
