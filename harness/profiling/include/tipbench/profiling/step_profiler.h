// Internal: `run --profile DIR`. After an arm's timed steps, a few more steps under LibTorch's
// Kineto profiler (CPU ops; CUDA kernels too on a GPU), saved as a Chrome trace (opens in
// Perfetto or chrome://tracing), with the ops that took the most self time. Never timed.
#pragma once

#include "tipbench/results/result.h"
#include "tipbench/suite/suite.h"

#include <c10/core/Device.h>

#include <string>

namespace tipbench::detail {

// "zero_grad/model:small_cnn/batch:32/arm:zero" -> "zero_grad.model-small_cnn.batch-32.arm-zero.trace.json"
std::string trace_file_name(const std::string& arm_name);

// Runs `steps` steps of the workload under the profiler and writes the trace to `trace_path`
// atomically (its directory is created). A profiler failure is returned in ArmProfile::error:
// the arm's measurement stands without it.
ArmProfile profile_steps(Workload& workload, const c10::Device& device, int steps, const std::string& trace_path);

}  // namespace tipbench::detail
