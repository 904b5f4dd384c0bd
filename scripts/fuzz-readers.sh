#!/usr/bin/env bash
# Fuzzes the file readers (result, stored baseline, gate config, dataset manifest, partial run with
# its options read and checked as the command line's, and a .pt2 model file's records) with
# AddressSanitizer and UndefinedBehaviorSanitizer: builds them alone with clang (the .pt2 reader
# over the real LibTorch of the project's .venv: a few minutes; the others need no LibTorch), runs
# the reader fuzz test's corpus under the sanitizers, then libFuzzer on each reader for SECONDS
# (default 60), starting from the real files. Exit 0: nothing found.
#   scripts/fuzz-readers.sh [SECONDS] [--no-pt2]
# Needs Debian's clang and libclang-rt-14-dev; for the .pt2 reader, the project's .venv
# (scripts/bootstrap.sh; TIPBENCH_PYTHON names another Python with torch). A finding leaves its
# input in build-fuzz/findings/<reader>/ (replay: TIPBENCH_FUZZ_READER=<reader> build-fuzz/fuzz_readers
# FILE; for the .pt2 reader, the TIPBENCH_FUZZ_PT2_* variables its log names, and build-fuzz/fuzz_pt2 FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60 pt2=1
for arg in "$@"; do
  case $arg in
    --no-pt2) pt2=0 ;;
    *) seconds=$arg ;;
  esac
done
build=${TIPBENCH_FUZZ_BUILD_DIR:-build-fuzz}
mkdir -p "$build" && build=$(cd "$build" && pwd)  # absolute: the test's data folder is named from it
python=${TIPBENCH_PYTHON:-$PWD/.venv/bin/python}
log() { printf '[fuzz-readers] %s\n' "$*" >&2; }

command -v clang++ >/dev/null || { log "clang++ not found: apt-get install clang libclang-rt-14-dev"; exit 2; }
if ((pt2)) && ! "$python" -c "import torch" 2>/dev/null; then
  log "$python cannot import torch (scripts/bootstrap.sh, or TIPBENCH_PYTHON=...; --no-pt2 skips the .pt2 reader)"
  exit 2
fi
pt2_flags=(-DTIPBENCH_FUZZ_PT2=OFF)
((pt2)) && pt2_flags=(-DTIPBENCH_FUZZ_PT2=ON "-DTIPBENCH_PYTHON=$python")
CXX=clang++ cmake -S tests/fuzz/sanitize -B "$build" -G Ninja "${pt2_flags[@]}" >&2
cmake --build "$build" >&2

log "the reader fuzz test's corpus under ASan + UBSan"
# Its scratch files stay under $build/data: the manifest and partial run file it makes seed libFuzzer's corpus.
TIPBENCH_TEST_DATA=$build/data "$build/test_reader_fuzz"

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

# The .pt2 reader: one record of a real archive (tests/models/make_model_files.py's tiny.pt2) at a
# time, the graph that runs and the weights' layout; each input is read, prepared and run.
if ((pt2)); then
  files=$build/model_files
  [[ -f $files/done ]] || "$python" tests/models/make_model_files.py "$PWD" "$files" >&2
  for record in models/eval.json data/weights/train_weights_config.json; do
    name=pt2_${record//\//_} corpus=$build/corpus/$name findings=$build/findings/$name
    mkdir -p "$corpus" "$findings"
    "$python" - "$files/tiny.pt2" "$record" "$corpus/seed.json" <<'PY'
import json, sys, zipfile
archive, record, out = sys.argv[1:]
with zipfile.ZipFile(archive) as z:
    name = next(n for n in z.namelist() if n.split("/", 1)[1] == record)
    text = json.loads(z.read(name))
for node in text.get("graph_module", {}).get("graph", {}).get("nodes", []):
    node.pop("metadata", None)  # as the fuzz target's seed: lean_program in tests/fuzz/pt2_feed.h
open(out, "w").write(json.dumps(text))
PY
    log "libFuzzer on the .pt2 reader's $record for ${seconds}s"
    if ! TIPBENCH_FUZZ_PT2_SEED=$files/tiny.pt2 TIPBENCH_FUZZ_PT2_RECORD=$record "$build/fuzz_pt2" \
         -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=8192 -artifact_prefix="$findings/" \
         -print_final_stats=1 "$corpus" 2> "$build/fuzz_$name.log"; then
      log "$name: FOUND a crash; see $build/fuzz_$name.log and $findings/ (TIPBENCH_FUZZ_PT2_SEED=$files/tiny.pt2 TIPBENCH_FUZZ_PT2_RECORD=$record)"
      status=1
    fi
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz_$name.log" | sed "s/^/  $name /" >&2 || true
  done
fi
exit $status
