# tiny_sweep.sh: the small PAPA sweep the cluster tests run (sourced by tests/cluster/slurm.sh and image.sh), the
# same flags as tests/js/papa_shards.test.mjs: attnlab-mini-bert, 100 / 40 examples, L 32, 2 seeds, 5
# configurations, a few seconds per shard.
# shellcheck disable=SC2034,SC2054
tiny_sweep_flags=(--max-train 100 --max-validation 40 --L 32 --seeds 1,2 --fractions 1,0.5,0 --orders lambda,random
                  --probe.epochs 2 --ranking.max-examples 48 --ranking.epochs 1)
