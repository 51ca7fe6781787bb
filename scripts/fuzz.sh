#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer harnesses of tests/fuzz (clang, ASan + UBSan, build/fuzz with -DAL_FUZZ=ON) and
# runs them (docs/fuzzing.md).
#   scripts/fuzz.sh --smoke            replay each seed corpus and the committed reproducers
#                                      (tests/fixtures/fuzz/<harness>/), then 4,000 runs of each harness from seed 1 (--seconds S: timed)
#   scripts/fuzz.sh --campaign N       fuzz each harness until it has run N executions (-runs=N), growing
#                                      build/fuzz/corpus/<harness>
#   --only a,b                         just these harnesses (names without "fuzz_")
#   --seconds S                        smoke: seconds of fuzzing per harness (3); campaign: a cap on each
#                                      harness's time (none by default); a harness stopped by it short of N
#                                      executions is reported SHORT and fails the campaign
#   --parallel P                       campaign: P harnesses at a time (1)
#   FUZZ_BUILD=dir                     build and work in dir instead of build/fuzz (a second campaign beside
#                                      a running one)
# Then the page's link decoder (harness name "link"): tests/js/link_fuzz.mjs under node, seed 1 in the smoke,
# a random seed and LINK_FUZZ_CASES (5,000) cases per property in a campaign.
# Prints one line per harness; exits 1 when any harness crashed, broke a promise (the input is saved in
# build/fuzz/artifacts/<harness>/) or fell short of its executions.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="" runs=0 only="" seconds="" parallel=1
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --campaign) mode=campaign; runs="$2"; shift ;;
    --only) only="$2"; shift ;;
    --seconds) seconds="$2"; shift ;;
    --parallel) parallel="$2"; shift ;;
    *) echo "usage: $0 --smoke | --campaign N [--only a,b] [--seconds S] [--parallel P]" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$mode" ] || { echo "usage: $0 --smoke | --campaign N [--only a,b] [--seconds S] [--parallel P]" >&2; exit 2; }
[[ "$runs" =~ ^[0-9]+$ && "$parallel" =~ ^[1-9][0-9]*$ ]] || { echo "$0: N and P must be counts" >&2; exit 2; }

build=${FUZZ_BUILD:-build/fuzz}
jobs=$(nproc)
if [ "$only" != link ]; then  # "--only link" needs no C build
  CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DAL_FUZZ=ON >/dev/null
  cmake --build "$build" -j "$jobs" >/dev/null
  rm -rf "$build/seeds"
  python3 scripts/fuzz_corpus.py "$build/seeds" >/dev/null
fi

# the dictionary that helps each harness
dict_for() {
  case "$1" in
    torch_bin|torch_pickle|torch_legacy) echo tests/fuzz/dict/pickle.dict ;;
    encode|vocab_txt|vocab_learn) echo tests/fuzz/dict/text.dict ;;
    *) echo tests/fuzz/dict/json.dict ;;
  esac
}

# inputs longer than this are not tried (vocabulary learning is quadratic in the text; the rest follow the seeds)
maxlen_for() {
  case "$1" in
    vocab_learn) echo -max_len=2048 ;;
    *) echo -max_len=0 ;;  # libFuzzer guesses from the corpus
  esac
}

# last "cov: N" (edges) and "ft: N" (features) of a libFuzzer log, its executed units and its speed
cov_of() { grep -o 'cov: [0-9]*' "$1" | tail -1 | awk '{print $2}'; }
ft_of() { grep -o 'ft: [0-9]*' "$1" | tail -1 | awk '{print $2}'; }
units_of() { grep -o 'stat::number_of_executed_units: [0-9]*' "$1" | tail -1 | awk '{print $2}'; }
speed_of() { grep -o 'stat::average_exec_per_sec: *[0-9]*' "$1" | tail -1 | awk '{print $2}'; }

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
common=(-rss_limit_mb=2048 -timeout=20 -print_final_stats=1)
# One harness: its line on stdout; returns 1 when it failed.
run_one() {
  local bin="$1" h status seeds repro art log before dirs n_seeds n_repro scratch budget crashes corpus start cap done_runs
  h=$(basename "$bin"); h=${h#fuzz_}
  seeds="$build/seeds/$h"; repro="tests/fixtures/fuzz/$h"; art="$build/artifacts/$h/"
  mkdir -p "$seeds" "$art"
  log="$build/logs/$h.$mode.log"; mkdir -p "$build/logs"
  before=$(ls "$art" | wc -l)
  dirs=("$seeds"); [ -d "$repro" ] && dirs+=("$repro")
  n_seeds=$(ls "$seeds" | wc -l); n_repro=$([ -d "$repro" ] && ls "$repro" | wc -l || echo 0)
  status=ok
  if [ "$mode" = smoke ]; then
    # replay: every seed and reproducer once (-runs=0 executes the given corpus and stops)
    if ! "$bin" "${common[@]}" -runs=0 -artifact_prefix="$art" "${dirs[@]}" >"$log" 2>&1; then status=FAILED; fi
    if [ $status = ok ]; then
      scratch=$(mktemp -d)
      # a fixed seed and a fixed number of runs: the smoke in the test command mutates the same inputs on
      # every machine, so it cannot pass on one run and fail on the next (--seconds S: a timed run instead)
      budget=(-seed=1 -runs="${SMOKE_RUNS:-4000}"); [ -n "$seconds" ] && budget=(-max_total_time="$seconds")
      if ! "$bin" "${common[@]}" "${budget[@]}" "$(maxlen_for "$h")" -dict="$(dict_for "$h")" -artifact_prefix="$art" \
          "$scratch" "${dirs[@]}" >>"$log" 2>&1; then status=FAILED; fi
      rm -rf "$scratch"
    fi
    crashes=$(( $(ls "$art" | wc -l) - before ))
    printf 'fuzz %-19s %-6s replayed %3d seeds + %d reproducers, then %8s runs (%s), cov %5s, %d crashes\n' \
      "$h" "$status" "$n_seeds" "$n_repro" "$(units_of "$log")" "${seconds:+$seconds s}${seconds:-seed 1}" "$(cov_of "$log")" "$crashes"
  else
    corpus="$build/corpus/$h"; mkdir -p "$corpus"
    start=$(date +%s)
    cap=(); [ -n "$seconds" ] && cap=(-max_total_time="$seconds")
    if ! "$bin" "${common[@]}" "${cap[@]}" -runs="$runs" "$(maxlen_for "$h")" -dict="$(dict_for "$h")" -artifact_prefix="$art" \
        "$corpus" "${dirs[@]}" >"$log" 2>&1; then status=FAILED; fi
    crashes=$(( $(ls "$art" | wc -l) - before ))
    done_runs=$(units_of "$log"); [ $status = ok ] && [ "${done_runs:-0}" -lt "$runs" ] && status=SHORT
    printf 'fuzz %-19s %-6s %10s executions, %6s exec/s, cov %5s, ft %6s, corpus %5d inputs, %d crashes, %5d s\n' \
      "$h" "$status" "$done_runs" "$(speed_of "$log")" "$(cov_of "$log")" "$(ft_of "$log")" "$(ls "$corpus" | wc -l)" \
      "$crashes" $(( $(date +%s) - start ))
  fi
  if [ $status != ok ]; then
    grep -E 'ERROR|promise broken|runtime error|Test unit written' "$log" | head -5 | sed 's/^/    /'
  fi
  [ $status = ok ]
}

failed=0
total_start=$(date +%s)
mkdir -p "$build/logs"
lines=()
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] && [ "$only" != link ] || continue
  h=$(basename "$bin"); h=${h#fuzz_}
  if [ -n "$only" ] && [[ ",$only," != *",$h,"* ]]; then continue; fi
  if [ "$mode" = campaign ] && [ "$parallel" -gt 1 ]; then
    # at most P at a time; each writes its line to a file, printed in order at the end
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
    run_one "$bin" >"$build/logs/$h.line" 2>&1 &
    lines+=("$build/logs/$h.line")
  else
    run_one "$bin" || failed=1
  fi
done
wait
for line in "${lines[@]}"; do
  cat "$line"
  grep -q '^fuzz [a-z_]* *ok ' "$line" || failed=1
done

# The page's link decoder (JavaScript): tests/js/link_fuzz.mjs, properties over random and mutated links.
# The smoke uses seed 1 and its default case count; a campaign a random seed (printed) and LINK_FUZZ_CASES
# (5,000) cases per property.
if [ -z "$only" ] || [[ ",$only," == *",link,"* ]]; then
  if [ "$mode" = smoke ]; then link_seed=1 link_cases=${LINK_FUZZ_CASES:-150}
  else link_seed=$(( (RANDOM << 15 | RANDOM) + 1 )) link_cases=${LINK_FUZZ_CASES:-5000}; fi
  log="$build/logs/link.$mode.log"; mkdir -p "$build/logs"
  start=$(date +%s) status=ok
  LINK_FUZZ_SEED=$link_seed LINK_FUZZ_CASES=$link_cases node --test tests/js/link_fuzz.mjs >"$log" 2>&1 || status=FAILED
  printf 'fuzz %-19s %-6s seed %d, %d cases per property, %d properties passed, %d s\n' link "$status" "$link_seed" \
    "$link_cases" "$(grep -c '^ok ' "$log")" $(( $(date +%s) - start ))
  if [ $status != ok ]; then failed=1; grep -E '^not ok|error:' "$log" | head -5 | sed 's/^/    /'; fi
fi
echo "fuzz: $mode done in $(( $(date +%s) - total_start )) s (logs in $build/logs)"
exit $failed
