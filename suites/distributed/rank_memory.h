// A rank's peak memory since the last reset: the CUDA caching allocator's peak allocated bytes on
// a GPU, the process's peak resident set (VmHWM) on a CPU. Example:
//   reset_peak_memory(device); ...; double mb = peak_memory_mb(device);
#pragma once

#include <c10/core/Device.h>

namespace tipbench::distributed {

void reset_peak_memory(const c10::Device& device);
double peak_memory_mb(const c10::Device& device);

}  // namespace tipbench::distributed
