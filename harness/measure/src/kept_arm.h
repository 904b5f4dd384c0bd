// Internal: an in-process arm's workload kept from one of its trials to the next within a case
// (Workload::keep_between_trials). The next trial skips the build (model, optimizer, staged
// inputs) and re-warms only until its step time is back at the last trial's; it times as many
// steps as the arm's first trial. The runner releases every kept arm when the case ends.
#pragma once

#include "tipbench/device/memory_probe.h"

#include "tipbench/suite/suite.h"

#include <memory>

namespace tipbench::detail {

struct KeptArm {
  std::unique_ptr<Workload> workload;  // null: nothing kept (the next trial builds it)
  int timed_steps = 0;
  double median_step_s = 0;  // of the last trial's timed steps: the re-warm's target
  HeldMemory held;           // what the workload holds between trials (measured after its first)
};

}  // namespace tipbench::detail
