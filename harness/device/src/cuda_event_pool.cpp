#include "tipbench/device/cuda_event_pool.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

namespace tipbench {

CudaEventPool::CudaEventPool(c10::DeviceIndex device, int reserve) : device_(device) {
  const auto stream = c10::cuda::getCurrentCUDAStream(device_);
  for (int i = 0; i < reserve; ++i) {
    auto event = make();
    event->record(stream);  // CUDAEvent creates the CUDA event on its first record
    free_.push_back(std::move(event));
  }
  if (reserve > 0) stream.synchronize();
}

CudaEventPool::~CudaEventPool() = default;

std::unique_ptr<at::cuda::CUDAEvent> CudaEventPool::make() {
  ++created_;
  return std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault);  // the default flags disable timing
}

std::unique_ptr<at::cuda::CUDAEvent> CudaEventPool::take() {
  if (free_.empty()) return make();
  auto event = std::move(free_.back());
  free_.pop_back();
  return event;
}

void CudaEventPool::give_back(std::unique_ptr<at::cuda::CUDAEvent> event) {
  if (event) free_.push_back(std::move(event));
}

}  // namespace tipbench
