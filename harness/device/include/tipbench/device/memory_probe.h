// Internal: peak memory of one trial. CUDA (the device allocator's statistics, device_allocator.h): the caching
// allocator's peak allocated and reserved bytes (cache emptied and peaks reset at the start), and the allocated peak of
// the timed steps alone (peaks reset again when they begin). CPU: peak resident set (VmHWM, reset via
// /proc/self/clear_refs) minus the resident set at the start; absent where the kernel refuses.
// Kept workloads (trial.h): what other arms hold between their trials is taken out of a trial's
// CUDA peaks, and what the arm itself built in an earlier trial is added back to its CPU growth,
// so a kept arm's memory reads as if its trial had been alone and fresh.
#pragma once

#include "tipbench/device/device_allocator.h"
#include "tipbench/results/result.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tipbench::detail {

// What a kept arm holds between its trials (its model, optimizer state, staged inputs).
struct HeldMemory {
  std::int64_t allocated_bytes = 0;  // CUDA
  std::int64_t reserved_bytes = 0;   // CUDA, after the cache is emptied
  std::int64_t rss_bytes = 0;        // CPU

  HeldMemory& operator+=(const HeldMemory& other);
};

class MemoryProbe {
 public:
  explicit MemoryProbe(const c10::Device& device);
  void begin();
  // Between the warm-up and the first timed step: CUDA keeps the peaks so far and resets them,
  // so that end() can tell the timed steps' own peak from the whole trial's.
  void begin_timed();
  // `held_by_others`: what the other kept arms hold now; `held_by_self`: what this arm held
  // before begin() (zero for a trial that built its workload).
  MemoryUse end(const HeldMemory& held_by_others, const HeldMemory& held_by_self) const;
  // After end(), with the trial's workload still alive: what it holds beyond what was there at
  // begin() (empties the CUDA cache; trims the heap on the CPU).
  HeldMemory held_since_begin() const;
  // Every allocator reading the probe took, in order ({"at": "begin", "allocated_current": ...}):
  // the first-call fixtures (docs/gpu.md) bring these back from a GPU for the CPU tests.
  nlohmann::ordered_json readings_json() const;

 private:
  AllocatorReading read(const char* moment) const;

  c10::Device device_;
  DeviceAllocator* allocator_;  // null: a CPU, measured by its resident set
  mutable std::vector<std::pair<std::string, AllocatorReading>> readings_;
  std::int64_t rss_before_bytes_ = -1;
  std::int64_t allocated_before_bytes_ = 0;
  std::int64_t reserved_before_bytes_ = 0;
  bool peak_was_reset_ = false;
  bool timed_ = false;
  std::int64_t untimed_peak_allocated_bytes_ = 0;
  std::int64_t untimed_peak_reserved_bytes_ = 0;
};

}  // namespace tipbench::detail
