# Sourced by scripts that measure under load (scripts/bench_conditions_gate.sh,
# tests/scripts/test_conditions_gate.sh): start_busy_cpus starts one spinning shell per CPU this
# process may use, stop_busy_cpus kills and reaps them (call it from an EXIT trap too).
busy_cpu_pids=()
start_busy_cpus() {
  local _
  for _ in $(seq "$(nproc)"); do (while :; do :; done) & busy_cpu_pids+=($!); done
}
stop_busy_cpus() {
  local pid
  for pid in "${busy_cpu_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${busy_cpu_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  busy_cpu_pids=()
}
