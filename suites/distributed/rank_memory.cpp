#include "distributed/rank_memory.h"

#include <c10/cuda/CUDACachingAllocator.h>

#include <fstream>
#include <string>

namespace tipbench::distributed {

void reset_peak_memory(const c10::Device& device) {
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return;
  }
  std::ofstream("/proc/self/clear_refs") << "5";  // 5 resets VmHWM (Linux >= 4.0)
}

double peak_memory_mb(const c10::Device& device) {
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return static_cast<double>(stats.allocated_bytes[0].peak) / (1024.0 * 1024.0);
  }
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  return 0;
}

}  // namespace tipbench::distributed
