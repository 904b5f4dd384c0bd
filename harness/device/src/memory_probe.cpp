#include "tipbench/device/memory_probe.h"

#include "tipbench/environment/proc_status.h"

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

std::int64_t non_negative(std::int64_t bytes) { return std::max<std::int64_t>(0, bytes); }

}  // namespace

HeldMemory& HeldMemory::operator+=(const HeldMemory& other) {
  allocated_bytes += other.allocated_bytes;
  reserved_bytes += other.reserved_bytes;
  rss_bytes += other.rss_bytes;
  return *this;
}

MemoryProbe::MemoryProbe(const c10::Device& device) : device_(device), allocator_(device_allocator(device)) {}

AllocatorReading MemoryProbe::read(const char* moment) const {
  const auto reading = allocator_->read();
  readings_.push_back({moment, reading});
  return reading;
}

void MemoryProbe::begin() {
  if (allocator_) {
    // Cached blocks of the previous arm would otherwise count as this arm's reserved memory.
    // torch.cuda.empty_cache(), then reset_peak_memory_stats(), then memory_allocated() and
    // memory_reserved() (torch/cuda/memory.py: allocated_bytes.all.current, reserved_bytes...).
    allocator_->empty_cache();
    allocator_->reset_peaks();
    const auto r = read("begin");
    allocated_before_bytes_ = r.allocated_current;
    reserved_before_bytes_ = r.reserved_current;
    return;
  }
  ::malloc_trim(0);  // hand freed heap back so the previous arm's pages don't hide growth
  peak_was_reset_ = reset_peak_rss();
  rss_before_bytes_ = proc_status_bytes("VmRSS");
}

void MemoryProbe::begin_timed() {
  if (!allocator_) return;
  const auto r = read("begin_timed");
  untimed_peak_allocated_bytes_ = r.allocated_peak;
  untimed_peak_reserved_bytes_ = r.reserved_peak;
  // torch.cuda.reset_peak_memory_stats(): the peaks restart from what is allocated now
  // (c10 Stat::reset_peak: peak = current), so the larger of the two windows is the trial's peak.
  allocator_->reset_peaks();
  timed_ = true;
}

MemoryUse MemoryProbe::end(const HeldMemory& held_by_others, const HeldMemory& held_by_self) const {
  MemoryUse use;
  if (allocator_) {
    const auto r = read("end");
    const std::int64_t timed_allocated = r.allocated_peak;
    // The whole trial's peaks: the larger of the untimed part's and the timed steps'.
    const std::int64_t allocated = std::max(timed_allocated, untimed_peak_allocated_bytes_);
    const std::int64_t reserved = std::max(r.reserved_peak, untimed_peak_reserved_bytes_);
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
  if (allocator_) {
    // torch.cuda.empty_cache() first, so reserved counts only the segments the kept workload pins.
    allocator_->empty_cache();
    const auto r = read("held");
    held.allocated_bytes = non_negative(r.allocated_current - allocated_before_bytes_);
    held.reserved_bytes = non_negative(r.reserved_current - reserved_before_bytes_);
    return held;
  }
  ::malloc_trim(0);
  const std::int64_t now = proc_status_bytes("VmRSS");
  if (now >= 0 && rss_before_bytes_ >= 0) held.rss_bytes = non_negative(now - rss_before_bytes_);
  return held;
}

nlohmann::ordered_json MemoryProbe::readings_json() const {
  auto list = nlohmann::ordered_json::array();
  for (const auto& [moment, r] : readings_) {
    list.push_back({{"at", moment},
                    {"allocated_current", r.allocated_current},
                    {"allocated_peak", r.allocated_peak},
                    {"reserved_current", r.reserved_current},
                    {"reserved_peak", r.reserved_peak}});
  }
  return list;
}

}  // namespace tipbench::detail
