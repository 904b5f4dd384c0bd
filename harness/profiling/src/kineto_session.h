// Internal: one session of LibTorch's Kineto profiler around a few steps, shared by `run
// --profile` (step_profiler.cpp: a Chrome trace) and `run --explain` (step_attribution.cpp: a step
// breakdown). The device is synchronised before and after, so neither the timed steps' work nor
// any of the profiled steps' is left outside.
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <functional>
#include <memory>
#include <string>

namespace tipbench::detail {

struct KinetoSession {
  std::unique_ptr<torch::autograd::profiler::ProfilerResult> result;  // null when it failed
  double wall_ms = 0;                                                 // the steps' wall time
  std::string error;                                                  // why there is no result
};

// CPU ops (and CUDA activity on a GPU), allocations too with `memory`, while `steps` runs. An arm
// that profiles itself (debug_apis) already holds the profiler: then nothing runs and the error
// says so.
KinetoSession profile_session(const c10::Device& device, bool memory, const std::function<void()>& steps);

}  // namespace tipbench::detail
