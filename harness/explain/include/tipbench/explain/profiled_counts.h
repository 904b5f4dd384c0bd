// Counted work from the profiler's events of a few steps (profiled_steps.h's plain values): per
// step, the ATen ops dispatched (all, and those no other op called), the measured device's
// allocations and their bytes, and on CUDA the kernels, copies by direction with their bytes,
// memsets and the host's synchronisations. Only the attributed steps count (under a
// tipbench::step scope, reached through parents and, for device work no call parented, the op
// Kineto correlated); the lead-in does not. No LibTorch: a CPU test builds CUDA lists to PyTorch's
// profiler semantics (profiled_steps.h's links).
//   StepCounts c = count_profiled_steps(steps);   // c.ops_per_step, c.kernels_per_step
#pragma once

#include "tipbench/explain/profiled_steps.h"
#include "tipbench/results/step_counts.h"

#include <string>

namespace tipbench {

StepCounts count_profiled_steps(const ProfiledSteps& steps);

// An event name that is a dispatched op: "namespace::name" (aten::add_, c10d::allreduce_), not a
// tipbench:: or autograd:: scope, an autograd node ("AddmmBackward0") or a user scope.
bool is_dispatched_op(const std::string& name);

// A CUDA runtime or driver call that blocks the host until the device (or a stream, or an event)
// is done: cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, a blocking
// cudaMemcpy. The names Kineto gives them (CUPTI's cbid names: libkineto's RuntimeActivity).
bool is_host_sync(const std::string& name);

// "Memcpy HtoD (Pageable -> Device)" -> "Memcpy HtoD": the direction, without the memory kinds.
std::string copy_direction(const std::string& name);

}  // namespace tipbench
