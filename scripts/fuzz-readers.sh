#!/usr/bin/env bash
# Fuzzes the file readers (result, stored baseline, gate config, dataset manifest, partial run with
# its options read and checked as the command line's) with
# AddressSanitizer and UndefinedBehaviorSanitizer: builds them alone with clang (no LibTorch:
# about a minute), runs the reader fuzz test's corpus under the sanitizers, then libFuzzer on
# each reader for SECONDS (default 60), starting from the real files. Exit 0: nothing found.
#   scripts/fuzz-readers.sh [SECONDS]
# Needs Debian's clang and libclang-rt-14-dev. A finding leaves its input in
# build-fuzz/findings/<reader>/ (replay: TIPBENCH_FUZZ_READER=<reader> build-fuzz/fuzz_readers FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${TIPBENCH_FUZZ_BUILD_DIR:-build-fuzz}
log() { printf '[fuzz-readers] %s\n' "$*" >&2; }

command -v clang++ >/dev/null || { log "clang++ not found: apt-get install clang libclang-rt-14-dev"; exit 2; }
if [[ ! -f $build/build.ninja ]]; then
  CXX=clang++ cmake -S tests/fuzz/sanitize -B "$build" -G Ninja >&2
fi
cmake --build "$build" >&2

log "the reader fuzz test's corpus under ASan + UBSan"
# Its scratch files stay under $build/data: the manifest and partial run file it makes seed libFuzzer's corpus.
TIPBENCH_TEST_DATA=$PWD/$build/data "$build/test_reader_fuzz"

status=0
for reader in result baseline gate_config manifest partial_run; do
  corpus=$build/corpus/$reader findings=$build/findings/$reader
  mkdir -p "$corpus" "$findings"
  case $reader in
    result|baseline) cp docs/examples/result-v1.json "$corpus/seed.json" ;;
    gate_config) cp ci/gate-thresholds.json "$corpus/seed.json" ;;
    manifest) cp "$build/data/reader_fuzz_manifest/seed_dataset/manifest.json" "$corpus/seed.json" ;;
    partial_run) cp "$build/data/reader_fuzz_partial_run/seed_partial/seed.partial" "$corpus/seed.json" ;;
  esac
  dict=()
  [[ $reader == partial_run ]] && dict=(-dict=tests/fuzz/partial_run.dict)  # reaches the option fields
  log "libFuzzer on the $reader reader for ${seconds}s"
  if ! TIPBENCH_FUZZ_READER=$reader "$build/fuzz_readers" -max_total_time="$seconds" -max_len=65536 \
       "${dict[@]}" -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" 2> "$build/fuzz_$reader.log"; then
    log "$reader: FOUND a crash; see $build/fuzz_$reader.log and $findings/"
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz_$reader.log" | sed "s/^/  $reader /" >&2 || true
done
exit $status
