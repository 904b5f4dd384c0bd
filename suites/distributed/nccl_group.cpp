// The only file that includes ProcessGroupNCCL.hpp. TIPBENCH_HAVE_NCCL is set by CMake when the
// nvidia-nccl wheel's nccl.h is found; without it the factory reports that clearly at run time.
#include "distributed/groups.h"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

#ifdef TIPBENCH_HAVE_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace tipbench::distributed {

c10::intrusive_ptr<c10d::Backend> make_nccl_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, c10::DeviceIndex device_index,
                                                  std::chrono::milliseconds timeout) {
#ifdef TIPBENCH_HAVE_NCCL
  c10::cuda::set_device(device_index);  // before the communicator is made
  auto options = c10d::ProcessGroupNCCL::Options::create();
  // The gradient group's bound on a collective, as the Gloo groups have it (not NCCL's default
  // 10 minutes). Blocking wait stays off (TORCH_NCCL_BLOCKING_WAIT): wait() only orders the
  // streams, so the all-reduce still overlaps backward; a collective past the timeout is aborted
  // by ProcessGroupNCCL's watchdog, which ends the process (docs/distributed.md).
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
#else
  (void)store, (void)rank, (void)world_size, (void)device_index, (void)timeout;
  throw std::runtime_error("this tipbench build has no NCCL support (nccl.h was not found at configure time)");
#endif
}

std::string nccl_transport_text() {
  std::string out = "NCCL's own choice (InfiniBand when present, else a socket interface)";
  for (const char* name : {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      out += std::string("; ") + name + "=" + value;
    }
  }
  return out;
}

}  // namespace tipbench::distributed
