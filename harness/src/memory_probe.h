// Internal: peak memory of one trial. CUDA: the caching allocator's peak allocated and reserved
// bytes (cache emptied and peaks reset at the start). CPU: peak resident set (VmHWM, reset via
// /proc/self/clear_refs) minus the resident set at the start; absent where the kernel refuses.
#pragma once

#include "tipbench/result.h"

#include <c10/core/Device.h>

#include <cstdint>

namespace tipbench::detail {

class MemoryProbe {
 public:
  explicit MemoryProbe(const c10::Device& device);
  void begin();
  MemoryUse end() const;

 private:
  c10::Device device_;
  std::int64_t rss_before_bytes_ = -1;
  bool peak_was_reset_ = false;
};

}  // namespace tipbench::detail
