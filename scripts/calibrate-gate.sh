#!/usr/bin/env bash
# Calibrates the regression gate on this machine with real runs (docs/gate.md, "Calibration"):
# N A/A gates (the same binary as head and base) and N gates whose head is slowed by PCT% with the
# --inject-slowdown test knob, in both modes: same-machine interleaved (head vs base binaries)
# and stored baseline (two separate runs, unpaired). Prints one line per gate and the tally of
# exit codes (0 pass, 1 confirmed regression, 3 inconclusive).
#   scripts/calibrate-gate.sh [-n N] [-p PCT] [-b BINARY] [-o DIR] [-s SUITE] [-B BLOCKS] [-f] [-e CONFIG]...
# -f uses full trials (2 s, >= 20 steps) instead of --quick ones; -B sets the blocks per side.
# The gates use the default config (wall-clock throughput at 3%). -e also evaluates every gate's
# runs under that gate config, with its own confirmation runs, tallied separately: two metrics
# compared on the same measurements (e.g. -e ci/gate-thresholds.json, which on a CPU gates the
# process CPU time per step).
set -euo pipefail
n=5
pct=5
bin=build/tipbench
out=results/calibration/$(date -u +%Y%m%dT%H%M%SZ)
suite=zero_grad
blocks=8
budget=(--quick)   # run's trial budget; -f: the full one
extra_configs=()
while getopts "n:p:b:o:s:B:fe:" opt; do
  case $opt in
    n) n=$OPTARG ;; p) pct=$OPTARG ;; b) bin=$OPTARG ;; o) out=$OPTARG ;; s) suite=$OPTARG ;;
    B) blocks=$OPTARG ;; f) budget=() ;; e) extra_configs+=("$(realpath "$OPTARG")") ;;
    *) echo "usage: $0 [-n N] [-p PCT] [-b BINARY] [-o DIR] [-s SUITE] [-B BLOCKS] [-f] [-e CONFIG]..." >&2; exit 2 ;;
  esac
done
gate_budget=(--blocks "$blocks"); ((${#budget[@]})) || gate_budget+=(--full)
mkdir -p "$out"
bin=$(realpath "$bin")
tally() { printf '%s: exit 0 (pass) %s, 1 (regression) %s, 3 (inconclusive) %s, other %s\n' "$1" \
  "$(grep -c ' rc=0$' "$2" || true)" "$(grep -c ' rc=1$' "$2" || true)" "$(grep -c ' rc=3$' "$2" || true)" \
  "$(grep -vcE ' rc=(0|1|3)$' "$2" || true)"; }

# evaluate_again MODE KIND I BASE CURRENT [--paired]: the same runs under each -e config.
evaluate_again() {
  local mode=$1 kind=$2 i=$3 base=$4 current=$5; shift 5
  for config in "${extra_configs[@]}"; do
    local name; name=$(basename "$config" .json)
    set +e
    "$bin" gate --baseline "$base" --current "$current" "$@" --config "$config" \
      --out-dir "$out/$mode-$kind-$i-$name" > "$out/$mode-$kind-$i-$name.txt" 2>&1
    local rc=$?
    set -e
    echo "$mode $kind $i $name rc=$rc" | tee -a "$out/$mode-$kind-$name.txt"
  done
}

for kind in aa injected; do
  : > "$out/interleaved-$kind.txt"
  for i in $(seq 1 "$n"); do
    extra=(); [[ $kind == injected ]] && extra=(--head-inject-slowdown "$pct")
    set +e
    "$bin" gate --base-binary "$bin" --head-binary "$bin" --suite "$suite" --device cpu --seed "$i" "${gate_budget[@]}" \
      "${extra[@]}" --out-dir "$out/interleaved-$kind-$i" > "$out/interleaved-$kind-$i.txt" 2>&1
    rc=$?
    set -e
    echo "interleaved $kind $i rc=$rc" | tee -a "$out/interleaved-$kind.txt"
    evaluate_again interleaved "$kind" "$i" "$out/interleaved-$kind-$i/base.json" "$out/interleaved-$kind-$i/head.json" --paired
  done
done

"$bin" run "${budget[@]}" --blocks "$blocks" --suite "$suite" --device cpu --out "$out/stored-base.json" > /dev/null 2>&1 || true
for kind in aa injected; do
  : > "$out/stored-$kind.txt"
  for i in $(seq 1 "$n"); do
    extra=(); [[ $kind == injected ]] && extra=(--inject-slowdown "$pct")
    "$bin" run "${budget[@]}" --blocks "$blocks" --suite "$suite" --device cpu --seed "$i" "${extra[@]}" --out "$out/stored-$kind-$i.json" \
      > /dev/null 2>&1 || true
    set +e
    "$bin" gate --baseline "$out/stored-base.json" --current "$out/stored-$kind-$i.json" \
      --out-dir "$out/stored-$kind-$i" > "$out/stored-$kind-$i.txt" 2>&1
    rc=$?
    set -e
    echo "stored $kind $i rc=$rc" | tee -a "$out/stored-$kind.txt"
    evaluate_again stored "$kind" "$i" "$out/stored-base.json" "$out/stored-$kind-$i.json"
  done
done

echo "== $out (suite $suite, ${budget[*]:-full} trials, $blocks blocks, injected slowdown $pct%, load average: $(cut -d' ' -f1-3 /proc/loadavg))"
for f in interleaved-aa interleaved-injected stored-aa stored-injected; do
  tally "$f" "$out/$f.txt"
  for config in "${extra_configs[@]}"; do
    name=$(basename "$config" .json)
    tally "$f ($name)" "$out/$f-$name.txt"
  done
done
