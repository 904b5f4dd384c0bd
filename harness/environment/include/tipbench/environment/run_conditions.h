// The conditions a run was measured under: how much of this process's CPUs other processes used
// (and the hypervisor stole) over the run, the load average, the CPU frequency and governor. Two
// runs far apart are unpaired: a loaded machine looks like a slower build, so the gate compares
// their conditions before it believes their difference (docs/gate.md, "Conditions of measurement").
// This file is the record and its comparison; conditions_probe.h (tipbench::machine) measures it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tipbench {

// One GPU's conditions over a run, from NVML (gpu_conditions.h measures them on a CUDA run).
struct GpuConditions {
  std::string gpu;                      // "GPU 0 (NVIDIA H100 80GB HBM3)"
  std::optional<double> sm_clock_mhz;   // at the end
  std::optional<double> temperature_c;  // the higher of start and end
  std::optional<double> power_w;        // at the end
  // Of the span (0..1), NVML's violation time: clocks held down by thermal limits (a cooling
  // problem: judged), and by the power cap (follows the workload itself: recorded, not judged).
  std::optional<double> thermal_share;
  std::optional<double> power_capped_share;
  std::optional<int> other_processes;         // compute processes besides this one: the most at start or end
  std::vector<std::string> throttle_reasons;  // active at the end (kThrottleReasons' texts)
};

struct RunConditions {
  int cpus = 0;       // the CPUs this process may run on (its affinity), whose time is counted
  double wall_s = 0;  // the span measured
  // Of those CPUs' time over the span: the share other processes kept busy (this process and
  // its waited-for children excluded), and the share the hypervisor stole. 0..1; nullopt where
  // /proc/stat cannot be read.
  std::optional<double> foreign_cpu;
  std::optional<double> steal;
  std::optional<double> load_average_start;  // 1-minute, /proc/loadavg
  std::optional<double> load_average_end;
  std::optional<double> cpu_mhz;        // mean scaling_cur_freq at the end; nullopt without cpufreq
  std::optional<std::string> governor;  // cpu0's scaling_governor; nullopt without cpufreq
  std::vector<GpuConditions> gpus;      // a CUDA run's GPUs (empty: a CPU run, or no NVML)
};

nlohmann::json conditions_to_json(const RunConditions& c);
// The conditions of runs one after another (an interleaved session's blocks, merged): shares
// weighted by each run's wall time, the first run's start and the last one's end. Null when none
// of them recorded conditions.
nlohmann::json combine_conditions(const std::vector<nlohmann::json>& runs);
RunConditions conditions_from_json(const nlohmann::json& j);  // missing keys stay unset

// One sentence for the run's summary when other processes or the hypervisor took a share of the
// CPUs at least the default bound, or a GPU's clocks were held down by heat (thermal slowdown) for at least
// the default bound's share of it (its times then differ from a quiet run's); "" otherwise.
std::string conditions_warning(const nlohmann::json& conditions);

// The bound within which two unpaired runs count as measured under the same conditions.
struct ConditionsBound {
  double foreign_cpu = 0.20;  // difference in the share of the CPUs other processes used
  double steal = 0.05;        // difference in the share stolen by the hypervisor
  double gpu_thermal = 0.10;  // difference in the share of the run a GPU's clocks were held down by heat
};

// Why two runs' conditions differ beyond the bound, in one sentence ("" when they do not, or when
// either side did not record them: results older than schema 1.6 are judged as before). GPUs are
// compared in order when both runs recorded them: the thermal share and other processes (a process
// that came or went is a difference; the same count on both sides is not, since inside a container
// NVML may list this process under a host pid). The power-capped share, SM clock and power are not
// judged: a build that does more work per step draws more power and runs slower clocks, and judging
// them would turn its regression into INCONCLUSIVE.
std::string conditions_difference(const nlohmann::json& reference, const nlohmann::json& candidate,
                                  const ConditionsBound& bound);

// Whether other processes or the hypervisor took at least the bound's share of a run's CPUs: a
// run that shared its machine (conditions_warning says so; advise labels its advice).
bool shared_its_cpus(const RunConditions& c, const ConditionsBound& bound = {});

}  // namespace tipbench
