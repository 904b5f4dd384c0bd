// Event lists built by hand to PyTorch 2.11's profiler semantics (profiled_steps.h's links), for
// the tests of the reduction (test_profiled_steps.cpp) and of the counts (test_profiled_counts.cpp).
#pragma once

#include "tipbench/explain/profiled_steps.h"

#include <cstdint>
#include <string>

namespace tipbench::testing {

using tipbench::ProfiledEvent;
using tipbench::ProfiledKind;
using tipbench::ProfiledSteps;

inline constexpr std::uint64_t kMain = 1, kEngine = 2;  // the main thread, the autograd engine's device thread
inline constexpr std::int64_t kUs = 1000;

// Builds a CUDA event list: times in microseconds, indices returned for links.
class CudaSteps {
 public:
  CudaSteps() {
    s.device_type = "cuda";
    s.device_index = 0;
  }
  std::int64_t op(const std::string& name, std::int64_t start_us, std::int64_t end_us, std::int64_t parent,
                  std::uint64_t thread = kMain) {
    return add({.kind = ProfiledKind::op,
                .name = name,
                .start_ns = start_us * kUs,
                .end_ns = end_us * kUs,
                .thread = thread,
                .parent = parent});
  }
  // cudaLaunchKernel at `launch_us` inside `op`, and its kernel on the device.
  std::int64_t kernel(const std::string& name, std::int64_t launch_us, std::int64_t start_us, std::int64_t end_us,
                      std::int64_t op, std::uint64_t thread = kMain, const char* launch = "cudaLaunchKernel",
                      ProfiledKind kind = ProfiledKind::kernel, int device = 0) {
    const auto runtime = add({.kind = ProfiledKind::runtime,
                              .name = launch,
                              .start_ns = launch_us * kUs,
                              .end_ns = (launch_us + 3) * kUs,
                              .thread = thread,
                              .parent = op});
    return add({.kind = kind,
                .name = name,
                .start_ns = start_us * kUs,
                .end_ns = end_us * kUs,
                .parent = runtime,
                .linked = op,
                .device = device,
                .stream = 7});
  }
  std::int64_t annotation(const std::string& name, std::int64_t start_us, std::int64_t end_us, std::int64_t parent) {
    return add({.kind = ProfiledKind::gpu_annotation,
                .name = name,
                .start_ns = start_us * kUs,
                .end_ns = end_us * kUs,
                .parent = parent,
                .device = 0,
                .stream = 7});
  }
  std::int64_t alloc(std::int64_t at_us, std::int64_t ptr, std::int64_t bytes, std::int64_t total,
                     std::int64_t parent) {
    return add({.kind = ProfiledKind::allocation,
                .name = "[memory]",
                .start_ns = at_us * kUs,
                .end_ns = at_us * kUs,
                .thread = kMain,
                .parent = parent,
                .device = 0,
                .device_type = "cuda",
                .ptr = ptr,
                .bytes = bytes,
                .total_allocated = total});
  }
  // cudaMemcpyAsync at `launch_us` inside `op`, and the copy of `bytes` on the device.
  std::int64_t copy(const std::string& name, std::int64_t bytes, std::int64_t launch_us, std::int64_t op,
                    const char* call = "cudaMemcpyAsync") {
    const auto c = kernel(name, launch_us, launch_us + 5, launch_us + 8, op, kMain, call, ProfiledKind::memcpy);
    s.events[static_cast<std::size_t>(c)].bytes = bytes;
    return c;
  }
  // A host call that is no launch (a synchronisation) inside `op`.
  std::int64_t call(const std::string& name, std::int64_t start_us, std::int64_t end_us, std::int64_t op) {
    return add({.kind = ProfiledKind::runtime,
                .name = name,
                .start_ns = start_us * kUs,
                .end_ns = end_us * kUs,
                .thread = kMain,
                .parent = op});
  }
  std::int64_t add(ProfiledEvent e) {
    s.events.push_back(std::move(e));
    return static_cast<std::int64_t>(s.events.size()) - 1;
  }
  ProfiledSteps s;
};

}  // namespace tipbench::testing
