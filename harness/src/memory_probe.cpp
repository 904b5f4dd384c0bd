#include "memory_probe.h"

#include "tipbench/proc_status.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <malloc.h>

#include <fstream>
#include <string>

namespace tipbench::detail {

namespace {

bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";  // 5 resets the peak resident set size (Linux >= 4.0)
  out.flush();
  return static_cast<bool>(out);
}

c10::DeviceIndex cuda_index(const c10::Device& device) { return device.has_index() ? device.index() : 0; }

}  // namespace

MemoryProbe::MemoryProbe(const c10::Device& device) : device_(device) {}

void MemoryProbe::begin() {
  if (device_.is_cuda()) {
    // Cached blocks of the previous arm would otherwise count as this arm's reserved memory.
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(cuda_index(device_));
    return;
  }
  ::malloc_trim(0);  // hand freed heap back so the previous arm's pages don't hide growth
  peak_was_reset_ = reset_peak_rss();
  rss_before_bytes_ = proc_status_bytes("VmRSS");
}

MemoryUse MemoryProbe::end() const {
  MemoryUse use;
  if (device_.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(cuda_index(device_));
    use.peak_allocated_bytes = stats.allocated_bytes[0].peak;  // index 0: aggregate pool
    use.peak_reserved_bytes = stats.reserved_bytes[0].peak;
    return use;
  }
  const std::int64_t peak = proc_status_bytes("VmHWM");
  if (peak_was_reset_ && peak >= 0 && rss_before_bytes_ >= 0) {
    use.peak_rss_growth_bytes = std::max<std::int64_t>(0, peak - rss_before_bytes_);
  }
  return use;
}

}  // namespace tipbench::detail
