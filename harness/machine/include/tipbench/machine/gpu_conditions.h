// A CUDA run's GPU conditions of measurement, from NVML (loaded at run time; nothing without it):
// per GPU this process uses, the shares of the run its clocks were held down by thermal and by
// power limits (NVML's violation counters, as DCGM's thermal/power violation fields), the SM clock,
// temperature and power, the throttle reasons active at the end, and the other compute processes
// on it. Sampled at construction and at finish(), never inside the timed region. Example
// (run_measure.cpp):
//   GpuConditionsProbe gpus(result.context.device);   // "cuda:0"; "cpu": nothing
//   ... run the suites ...
//   conditions.gpus = gpus.finish();
#pragma once

#include "tipbench/environment/run_conditions.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace tipbench {

class GpuConditionsProbe {
 public:
  // The run's device: "cuda" or "cuda:N" probes that GPU; anything else (a CPU run) nothing.
  explicit GpuConditionsProbe(const std::string& device);
  ~GpuConditionsProbe();
  GpuConditionsProbe(const GpuConditionsProbe&) = delete;
  GpuConditionsProbe& operator=(const GpuConditionsProbe&) = delete;
  // Empty when disabled, without NVML, or when NVML sees none of this process's GPUs.
  std::vector<GpuConditions> finish() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tipbench
