// The only file that includes ProcessGroupNCCL.hpp. TIPBENCH_HAVE_NCCL is set by CMake when the
// nvidia-nccl wheel's nccl.h is found; without it the factory reports that clearly at run time.
#include "distributed/groups.h"

#include <stdexcept>

#ifdef TIPBENCH_HAVE_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace tipbench::distributed {

c10::intrusive_ptr<c10d::Backend> make_nccl_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, c10::DeviceIndex device_index) {
#ifdef TIPBENCH_HAVE_NCCL
  c10::cuda::set_device(device_index);  // before the communicator is made
  auto options = c10d::ProcessGroupNCCL::Options::create();
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
#else
  throw std::runtime_error("this tipbench build has no NCCL support (nccl.h was not found at configure time)");
#endif
}

}  // namespace tipbench::distributed
