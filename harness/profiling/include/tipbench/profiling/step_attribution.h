// Internal: `run --explain` and counted work. After a trial's timed steps, a few more steps under LibTorch's Kineto
// profiler (CPU ops, memory events; CUDA kernels too on a GPU), after one lead-in step that is
// recorded but not counted; the events become plain values (profiled_steps.h) and are reduced to
// a StepBreakdown: time per phase and ATen op (on a CPU the op's self time, on a GPU the device
// time of what it launched), the GPU's idle time, and the memory at the steps' peak by the op
// that allocated it; or counted (explain/profiled_counts.h: ops, allocations, kernels, copies,
// syncs). Never timed: the trial's numbers are final before it starts.
#pragma once

#include "tipbench/device/slowdown.h"
#include "tipbench/explain/profiled_steps.h"
#include "tipbench/results/step_breakdown.h"
#include "tipbench/results/step_counts.h"
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

// The lead-in and `steps` attributed steps under the profiler, as plain values, or why the
// profiler could not record them (`error`: the trial stands without them). Records the first
// call's fixture when the recording names an arm (fixture_recorder.h).
struct RecordedSteps {
  ProfiledSteps steps;
  std::string error;
};
RecordedSteps record_steps(Workload& workload, const c10::Device& device, int steps, SlowdownInjector& slowdown,
                           const BreakdownRecording& recording = {});

// Their breakdown and their counts; a failure to record or to reduce is in the result's error.
StepBreakdown breakdown_of(const RecordedSteps& recorded);
StepCounts counts_of(const RecordedSteps& recorded);

}  // namespace tipbench::detail
