// Internal: `run --explain`. After a trial's timed steps, a few more steps under LibTorch's Kineto
// profiler (CPU ops, memory events; CUDA kernels too on a GPU), reduced to a StepBreakdown: time
// per phase and ATen op (on a CPU the op's self time, on a GPU its kernels' device time), the GPU's
// idle time, and the memory live at the steps' allocation peak by the op that allocated it.
// Never timed: the trial's numbers are final before it starts.
#pragma once

#include "slowdown.h"
#include "tipbench/step_breakdown.h"
#include "tipbench/suite.h"

#include <c10/core/Device.h>

namespace tipbench::detail {

// A profiler failure is returned in StepBreakdown::error: the trial stands without it.
StepBreakdown break_down_steps(Workload& workload, const c10::Device& device, int steps, SlowdownInjector& slowdown);

}  // namespace tipbench::detail
