#include "tipbench/device/device_init.h"

#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>

namespace tipbench {

void initialize_device(const c10::Device& device) {
  if (!device.is_cuda()) return;
  // What torch.cuda._lazy_init does in Python: CUDAHooks::init, which sizes the caching
  // allocator's device table (CUDACachingAllocator::init) and the default generators.
  at::globalContext().lazyInitDevice(c10::kCUDA);
  if (device.has_index()) c10::cuda::set_device(device.index());
}

}  // namespace tipbench
