#!/bin/bash
# agreement_models.sh: the head_agreement op (docs/agreement.md) on each model and every built-in task, one
# reply per model and task, then the tables of scripts/agreement_table.py: OUT_DIR/MODEL.md per model (the
# cards' "Which heads matter") and OUT_DIR/summary.md (lambda against every measure, one row per model and
# task).
#
#   scripts/agreement_models.sh OUT_DIR [MODEL_DIR ...]     (default: both embedded models)
#
# Settings: the quick preset with 300 training examples (the constants, the lambda ranking, the probe and the
# gradient) and 150 validation examples (the statistics and norm mass), one thread at nice 10, so that a
# run takes minutes on a shared 2-core machine. AGREEMENT_FLAGS adds or overrides flags; AGREEMENT_TASKS picks
# tasks. A reply already in OUT_DIR is kept, so an interrupted run starts where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/agreement_models.sh OUT_DIR [MODEL_DIR ...]}
shift
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(models/attnlab-mini-bert models/attnlab-small-bert)
source scripts/model_runs.sh
cli=$(model_runs_cli agreement_models)
tasks=(${AGREEMENT_TASKS:-$(model_runs_tasks "$cli")})
mkdir -p "$out"
for model in "${models[@]}"; do
  [ -f "$model/config.json" ] || { echo "agreement_models: $model has no config.json" >&2; exit 2; }
  name=$(basename "$model")
  replies=()
  for task in "${tasks[@]}"; do
    reply="$out/${name}_$task.json"
    # shellcheck disable=SC2086
    model_runs_reply agreement_models "$reply" nice -n 10 "$cli" --threads 1 agreement "$model" --task "$task" \
      --tasks-dir build/data/tasks --json --max-train 300 --max-validation 150 --max-examples 300 ${AGREEMENT_FLAGS:-}
    replies+=("$reply")
  done
  python3 scripts/agreement_table.py "${replies[@]}" > "$out/$name.md"
  echo "agreement_models: $out/$name.md" >&2
done
python3 scripts/agreement_table.py --summary "$out"/*_*.json > "$out/summary.md"
echo "agreement_models: $out/summary.md" >&2
