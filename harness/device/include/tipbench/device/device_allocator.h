// The device allocator's statistics as values, behind one seam: the memory probe (a trial's
// peaks, what a kept arm holds) and the step breakdown read them here, so their arithmetic is
// tested on a CPU with a simulated caching allocator (tests/support/simulated_allocator.h) and
// runs on CUDA against PyTorch's own (c10/cuda/CUDACachingAllocator.h). Example:
//   if (auto* allocator = tipbench::device_allocator(device)) {
//     allocator->empty_cache();
//     allocator->reset_peaks();
//     const auto before = allocator->read().allocated_current;
//   }
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace tipbench {

// The aggregate pool's counters (StatType::AGGREGATE), as torch.cuda.memory_stats() names them:
// allocated_bytes.all.{current,peak}, reserved_bytes.all.{current,peak}.
struct AllocatorReading {
  std::int64_t allocated_current = 0;
  std::int64_t allocated_peak = 0;
  std::int64_t reserved_current = 0;
  std::int64_t reserved_peak = 0;
};

class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  virtual AllocatorReading read() const = 0;
  // torch.cuda.empty_cache(): frees the cached segments no live block is in (whole segments only).
  virtual void empty_cache() = 0;
  // torch.cuda.reset_peak_memory_stats(): every peak restarts from its current value.
  virtual void reset_peaks() = 0;
  // What PyTorch allocates through this allocator at a process's first use and never frees,
  // made now, so that it sits in every arm's baseline and in no arm's own memory: on CUDA the
  // cuBLAS and cuBLASLt workspaces of the current stream, for this thread and for the autograd
  // engine's device thread (one per handle and stream: CublasHandlePool.cpp, 32 MiB on sm_90).
  virtual void make_process_wide_state() = 0;
};

// The allocator whose statistics describe `device`'s memory: CUDA's caching allocator for a CUDA
// device (initialize_device first); none (nullptr) for a CPU, unless a test put one in.
DeviceAllocator* device_allocator(const c10::Device& device);

// Tests: every device_allocator() call returns `allocator` (whatever the device) until this is
// called again with nullptr. Not for use while trials run on other threads.
void use_device_allocator_for_tests(DeviceAllocator* allocator);

}  // namespace tipbench
