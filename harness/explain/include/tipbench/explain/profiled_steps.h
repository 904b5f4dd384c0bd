// What the profiler recorded of a few steps (`run --explain`), as plain values: every event with
// its kind, time, thread and links, and the allocator's state around them. The harness turns a
// Kineto session into this list (harness/profiling/src/step_attribution.cpp) and reduces the list to a
// StepBreakdown here, so the reduction is tested on lists built by hand to PyTorch's profiler
// semantics (a CPU machine records no kernel) and on lists a GPU recorded (the first-call
// fixtures, docs/gpu.md). No LibTorch.
//   ProfiledSteps s = profiled_steps_from_json(fixture);
//   StepBreakdown b = reduce_profiled_steps(s);
//
// The links, as torch/csrc/profiler/collection.cpp (2.11) makes them:
// - a CPU event's parent is the range that encloses it on its thread (build_tree); the first
//   event of the autograd engine's device thread is parented to the op the forward thread had
//   open (`fwd_tid`), so a backward op on a GPU reaches the main thread's tipbench::backward;
// - a device event's (kernel, memcpy, memset) parent is the runtime call that launched it
//   (cudaLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync, cudaGraphLaunch: the CUPTI flow,
//   TransferEvents::setParents), whose parent is the op it ran in;
// - a device event's `linked` is the op Kineto correlated it with (the innermost op's external
//   correlation id, CuptiActivityProfiler::handleGpuActivity): the op, not the launch call.
#pragma once

#include "tipbench/results/step_breakdown.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tipbench {

enum class ProfiledKind {
  op,              // an ATen op or a RecordFunction scope (tipbench::<phase>) on a CPU thread
  kernel,          // a CUDA kernel (Kineto CONCURRENT_KERNEL)
  memcpy,          // GPU_MEMCPY
  memset,          // GPU_MEMSET
  runtime,         // a CUDA runtime or driver call on the host (CUDA_RUNTIME, CUDA_DRIVER)
  gpu_annotation,  // the GPU span Kineto projects for a user scope (GPU_USER_ANNOTATION): no work
  allocation,      // an allocator event (profile_memory): bytes > 0 allocated, < 0 freed
  other,           // anything else Kineto reports (overhead, sync records): ignored
};
const char* profiled_kind_name(ProfiledKind kind);
// Work on the device: a kernel, a copy or a memset.
bool is_device_work(ProfiledKind kind);

struct ProfiledEvent {
  ProfiledKind kind = ProfiledKind::other;
  std::string name;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t thread = 0;  // host events: the thread that recorded it
  std::int64_t parent = -1;  // index into the list (above); -1: a root
  std::int64_t linked = -1;  // device events: the op Kineto correlated (above); -1: none
  int device = -1;           // device events and allocations: the device's index
  std::int64_t stream = -1;  // device events: the CUDA stream
  // Allocations: the device type ("cuda", "cpu"), the block, its size (negative: freed), and the
  // allocator's total allocated after it (c10::reportMemoryUsageToProfiler's total_allocated).
  // Copies and memsets: `bytes` is what they moved (CUPTI's, in Kineto's metadata).
  std::string device_type;
  std::int64_t ptr = 0;
  std::int64_t bytes = 0;
  std::int64_t total_allocated = 0;
};

// The scope of the untimed step that opens a session: its events are recorded but never
// attributed (its kernels still make the device busy). The steps after it run pipelined, as the
// timed ones do after their lead-in, and its head absorbs what a new Kineto session loses
// (pytorch#192021: the first kernel records of later sessions carry timestamps of another clock).
inline constexpr const char* kLeadInScope = "tipbench::lead_in";
// Every attributed step's scope.
inline constexpr const char* kStepScope = "tipbench::step";

struct ProfiledSteps {
  std::vector<ProfiledEvent> events;
  std::string device_type = "cpu";  // "cpu" or "cuda": the measured device
  int device_index = 0;             // CUDA: only this device's events count
  int steps = 0;                    // attributed steps (the lead-in not counted)
  double wall_ms = 0;               // their wall time, the profiler's cost included
  // CUDA: the caching allocator's allocated bytes when the session began, and what the case's
  // other kept arms hold (trial.h): the live-before bucket is what this arm had live.
  std::int64_t allocated_at_start = 0;
  std::int64_t held_by_others = 0;
};

// The breakdown of the attributed steps: per (phase, op) the CPU self time (CPU) or the device
// time of the kernels, copies and memsets the op launched (CUDA); the device's idle time split by
// whether the next device event was launched after the device went idle (it waited for the host)
// or before (anything else; also an event whose launch is unknown, as Holistic Trace Analysis
// counts it); the memory at the allocator's peak by the op that allocated it.
StepBreakdown reduce_profiled_steps(const ProfiledSteps& steps);

// The fixture format (docs/gpu.md, "Fixtures"). The reader checks what a file from elsewhere
// may hold: sizes, indices in range, names without control characters.
nlohmann::ordered_json profiled_steps_to_json(const ProfiledSteps& steps);
ProfiledSteps profiled_steps_from_json(const nlohmann::ordered_json& j);
inline constexpr std::size_t kMaxProfiledEvents = 2'000'000;

}  // namespace tipbench
