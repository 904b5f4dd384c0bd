// Makes a device ready before anything asks it for statistics. CUDA initialises lazily: the
// caching allocator's per-device table is made by CUDAHooks::init on the first CUDA tensor,
// generator or pinned allocation, and before that `resetPeakStats`/`getDeviceStats` throw
// "Invalid device argument 0: did you call init?" (c10/cuda/CUDACachingAllocator.cpp,
// NativeCachingAllocator::assertValidDevice). Every process that measures on CUDA (the run, a
// fresh-process trial, a DDP rank) calls this first. Example:
//   tipbench::initialize_device(c10::Device("cuda:0"));  // then allocator stats are safe
#pragma once

#include <c10/core/Device.h>

namespace tipbench {

// CUDA: initialises the CUDA context and the caching allocator (at::Context::lazyInitDevice, once
// per process) and makes `device` the current device. A no-op on the CPU. Idempotent and cheap.
void initialize_device(const c10::Device& device);

}  // namespace tipbench
