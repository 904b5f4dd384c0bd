# Sourced by the scripts behind `make quick` and `make test` (scripts/bootstrap.sh, scripts/test.sh):
# each stage's wall time goes to one log, so scripts/ci-times.sh can print the figures of the last
# cold and warm runs. A row per stage, tab-separated:
#   UTC start  run id  make target  stage  seconds  exit status  ccache hits  ccache misses
# The run id groups the stages of one `make` call (TIPBENCH_RUN_ID, set by the first script that
# sources this file and inherited by the scripts it starts). The ccache counts are the build
# stages' own (the difference of `ccache --print-stats` around the stage; "-" for other stages):
# they tell a cold build from a warm one. A stage run beside others (TIPBENCH_STAGE_BACKGROUND=1)
# is named "... (background)" and left out of the run's total.
#   source scripts/stage_times.sh
#   timed_stage "main build" cmake --build build
stage_log=${TIPBENCH_STAGE_LOG:-$PWD/.times/stages.tsv}
export TIPBENCH_RUN_ID=${TIPBENCH_RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)-$$}
export TIPBENCH_MAKE_TARGET=${TIPBENCH_MAKE_TARGET:-manual}

# The compiles ccache has answered from its cache and those it had to run, as "HITS MISSES".
ccache_counts() {
  command -v ccache >/dev/null || { echo "- -"; return; }
  ccache --print-stats 2>/dev/null | awk -F'\t' '
    $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hits += $2 }
    $1 == "cache_miss" { misses += $2 }
    END { print hits + 0, misses + 0 }'
}

# timed_stage NAME [--build] COMMAND...: runs COMMAND, logs its wall time (and with --build its
# ccache counts), prints one line with both, and returns COMMAND's exit status.
timed_stage() {
  local name=$1 build=0
  shift
  [[ ${TIPBENCH_STAGE_BACKGROUND:-0} == 1 ]] && name+=" (background)"
  if [[ ${1:-} == --build ]]; then build=1; shift; fi
  local before="- -" after="- -" hits=- misses=- h0 m0 h1 m1
  ((build)) && before=$(ccache_counts)
  local start=$SECONDS started
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local rc=0
  "$@" || rc=$?
  local took=$((SECONDS - start))
  if ((build)); then
    after=$(ccache_counts)
    read -r h0 m0 <<<"$before"
    read -r h1 m1 <<<"$after"
    if [[ $h0 != - && $h1 != - ]]; then hits=$((h1 - h0)) misses=$((m1 - m0)); fi
  fi
  mkdir -p "$(dirname "$stage_log")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$started" "$TIPBENCH_RUN_ID" "$TIPBENCH_MAKE_TARGET" "$name" "$took" "$rc" \
    "$hits" "$misses" >>"$stage_log"
  local detail=""
  [[ $hits != - ]] && detail=", ccache $hits hits, $misses misses"
  printf '[stage] %s: %d s (exit %d%s)\n' "$name" "$took" "$rc" "$detail" >&2
  return "$rc"
}
