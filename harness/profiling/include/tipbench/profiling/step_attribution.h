// Internal: `run --explain`. After a trial's timed steps, a few more steps under LibTorch's Kineto
// profiler (CPU ops, memory events; CUDA kernels too on a GPU), after one lead-in step that is
// recorded but not counted; the events become plain values (profiled_steps.h) and are reduced to
// a StepBreakdown: time per phase and ATen op (on a CPU the op's self time, on a GPU the device
// time of what it launched), the GPU's idle time, and the memory at the steps' peak by the op
// that allocated it. Never timed: the trial's numbers are final before it starts.
#pragma once

#include "tipbench/device/slowdown.h"
#include "tipbench/results/step_breakdown.h"
#include "tipbench/suite/suite.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace tipbench::detail {

struct BreakdownRecording {
  std::int64_t held_by_others_bytes = 0;  // CUDA: what the case's other kept arms hold (trial.h)
  std::string arm_name;                   // names the fixture (fixture_recorder.h); "" none
  int block = 0;
};

// A profiler failure is returned in StepBreakdown::error: the trial stands without it.
StepBreakdown break_down_steps(Workload& workload, const c10::Device& device, int steps, SlowdownInjector& slowdown,
                               const BreakdownRecording& recording = {});

}  // namespace tipbench::detail
