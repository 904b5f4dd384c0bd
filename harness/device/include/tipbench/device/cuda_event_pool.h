// Timing-enabled CUDA events made before the timed steps and reused once their owner gives them
// back, so no timed step asks the driver for a new event (cudaEventCreate). The same idea as
// c10::cuda::CUDAEventPool (c10/cuda/CUDAEvent.h), which the caching allocators use: events are
// recycled, never made per use; that pool's events have timing disabled (CUDAEvent's default
// flags), so elapsed_time refuses them, hence this one.
// Re-recording an event that has not completed yet is allowed (cudaEventRecord overwrites it);
// its owner gives it back only when it no longer needs the old value. Example:
//   CudaEventPool pool(device_index, /*reserve=*/32);   // before the timed loop
//   auto e = pool.take();  e->record(stream);  ...  e->elapsed_time(*other);  pool.give_back(std::move(e));
#pragma once

#include <ATen/cuda/CUDAEvent.h>
#include <c10/core/Device.h>

#include <memory>
#include <vector>

namespace tipbench {

class CudaEventPool {
 public:
  // Makes `reserve` timing-enabled events on `device` now (recorded once on its current stream,
  // which creates them, then synchronized).
  CudaEventPool(c10::DeviceIndex device, int reserve);
  ~CudaEventPool();
  CudaEventPool(const CudaEventPool&) = delete;
  CudaEventPool& operator=(const CudaEventPool&) = delete;

  // A free event; a new one only when every event is handed out (counted in created()).
  std::unique_ptr<at::cuda::CUDAEvent> take();
  void give_back(std::unique_ptr<at::cuda::CUDAEvent> event);
  int created() const { return created_; }

 private:
  std::unique_ptr<at::cuda::CUDAEvent> make();

  c10::DeviceIndex device_;
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> free_;
  int created_ = 0;
};

}  // namespace tipbench
