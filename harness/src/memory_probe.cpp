#include "memory_probe.h"

#include "tipbench/proc_status.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <malloc.h>

#include <algorithm>
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

auto cuda_stats(const c10::Device& device) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(cuda_index(device));
}

std::int64_t non_negative(std::int64_t bytes) { return std::max<std::int64_t>(0, bytes); }

}  // namespace

HeldMemory& HeldMemory::operator+=(const HeldMemory& other) {
  allocated_bytes += other.allocated_bytes;
  reserved_bytes += other.reserved_bytes;
  rss_bytes += other.rss_bytes;
  return *this;
}

MemoryProbe::MemoryProbe(const c10::Device& device) : device_(device) {}

void MemoryProbe::begin() {
  if (device_.is_cuda()) {
    // Cached blocks of the previous arm would otherwise count as this arm's reserved memory.
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(cuda_index(device_));
    // What torch.cuda.memory_allocated() / memory_reserved() read (torch/cuda/memory.py:
    // memory_stats()["allocated_bytes.all.current"], ["reserved_bytes.all.current"]).
    const auto stats = cuda_stats(device_);
    allocated_before_bytes_ = stats.allocated_bytes[0].current;  // index 0: aggregate pool
    reserved_before_bytes_ = stats.reserved_bytes[0].current;
    return;
  }
  ::malloc_trim(0);  // hand freed heap back so the previous arm's pages don't hide growth
  peak_was_reset_ = reset_peak_rss();
  rss_before_bytes_ = proc_status_bytes("VmRSS");
}

void MemoryProbe::begin_timed() {
  if (!device_.is_cuda()) return;
  const auto stats = cuda_stats(device_);
  untimed_peak_allocated_bytes_ = stats.allocated_bytes[0].peak;
  untimed_peak_reserved_bytes_ = stats.reserved_bytes[0].peak;
  // torch.cuda.reset_peak_memory_stats(): the peaks restart from what is allocated now.
  c10::cuda::CUDACachingAllocator::resetPeakStats(cuda_index(device_));
  timed_ = true;
}

MemoryUse MemoryProbe::end(const HeldMemory& held_by_others, const HeldMemory& held_by_self) const {
  MemoryUse use;
  if (device_.is_cuda()) {
    const auto stats = cuda_stats(device_);
    const std::int64_t timed_allocated = stats.allocated_bytes[0].peak;
    // The whole trial's peaks: the larger of the untimed part's and the timed steps'.
    const std::int64_t allocated = std::max(timed_allocated, untimed_peak_allocated_bytes_);
    const std::int64_t reserved = std::max(stats.reserved_bytes[0].peak, untimed_peak_reserved_bytes_);
    use.peak_allocated_bytes = non_negative(allocated - held_by_others.allocated_bytes);
    use.peak_reserved_bytes = non_negative(reserved - held_by_others.reserved_bytes);
    if (timed_) use.timed_peak_allocated_bytes = non_negative(timed_allocated - held_by_others.allocated_bytes);
    return use;
  }
  const std::int64_t peak = proc_status_bytes("VmHWM");
  if (peak_was_reset_ && peak >= 0 && rss_before_bytes_ >= 0) {
    use.peak_rss_growth_bytes = non_negative(peak - rss_before_bytes_ + held_by_self.rss_bytes);
  }
  return use;
}

HeldMemory MemoryProbe::held_since_begin() const {
  HeldMemory held;
  if (device_.is_cuda()) {
    // torch.cuda.empty_cache() first, so reserved counts only the segments the kept workload pins.
    c10::cuda::CUDACachingAllocator::emptyCache();
    const auto stats = cuda_stats(device_);
    held.allocated_bytes = non_negative(stats.allocated_bytes[0].current - allocated_before_bytes_);
    held.reserved_bytes = non_negative(stats.reserved_bytes[0].current - reserved_before_bytes_);
    return held;
  }
  ::malloc_trim(0);
  const std::int64_t now = proc_status_bytes("VmRSS");
  if (now >= 0 && rss_before_bytes_ >= 0) held.rss_bytes = non_negative(now - rss_before_bytes_);
  return held;
}

}  // namespace tipbench::detail
