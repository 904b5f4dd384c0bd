// The conditions of measurement read from this machine over a run: /proc's CPU counters, the
// load average, cpufreq (the record: run_conditions.h; a GPU's: tipbench/machine/gpu_conditions.h). Example
// (run_measure.cpp):
//   ConditionsProbe probe;                                  // reads /proc now
//   result.suites = run_suites(plan, progress);
//   result.context.conditions = conditions_to_json(probe.finish());
#pragma once

#include "tipbench/environment/run_conditions.h"

#include <cstdint>
#include <optional>

namespace tipbench {

// Samples /proc at construction; finish() returns the conditions since then. Never throws: what
// cannot be read stays nullopt.
class ConditionsProbe {
 public:
  ConditionsProbe();
  RunConditions finish() const;

 private:
  struct Counters {
    std::uint64_t total = 0, busy = 0, steal = 0, self = 0;
    bool valid = false;
  };
  static Counters read_counters();
  Counters start_;
  double start_seconds_;
  std::optional<double> load_start_;
};

}  // namespace tipbench
