// A caching allocator simulated on the CPU, to the rules of c10/cuda/CUDACachingAllocator.cpp
// (2.11) that the memory accounting depends on, for tests that drive the harness's CUDA memory
// logic through its seam (tipbench/device/device_allocator.h):
// - a request is rounded up to 512 bytes; up to 1 MiB it is cut from a 2 MiB "small" segment,
//   from 1 to 10 MiB from a 20 MiB segment, above that from a segment of its own rounded to 2 MiB
//   (the allocator's header comment; round_size, get_allocation_size);
// - a freed block stays in its segment, cached; empty_cache frees only segments no live block is
//   in (release_blocks: `!block->prev && !block->next`), and never a CUDA graph's private pool
//   while the graph lives (graph_pools_freeable);
// - allocated and reserved totals with peaks, reset_peaks setting peak = current (Stat::reset_peak);
// - make_process_wide_state allocates the cuBLAS workspace (32 MiB on sm_90) once, as a process's
//   first matmul does (CublasHandlePool.cpp), and first_matmul() does the same when it was not.
#pragma once

#include "tipbench/device/device_allocator.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

namespace tipbench::testing {

class SimulatedCachingAllocator final : public DeviceAllocator {
 public:
  static constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  static constexpr std::int64_t kWorkspaceBytes = 32 * kMiB;

  // Returns the block's id. `private_pool`: a CUDA graph's pool (never emptied while it lives).
  std::int64_t malloc(std::int64_t bytes, bool private_pool = false) {
    const std::int64_t size = round_up(std::max<std::int64_t>(bytes, 1), 512);
    const std::int64_t segment_size = size <= kMiB        ? 2 * kMiB
                                      : size <= 10 * kMiB ? 20 * kMiB
                                                          : round_up(size, 2 * kMiB);
    Segment* segment = nullptr;
    for (auto& [id, s] : segments_) {
      if (s.private_pool == private_pool && s.size == segment_size && s.size - s.used >= size) {
        segment = &s;
        break;
      }
    }
    if (!segment) {
      const std::int64_t id = next_id_++;
      segment = &segments_[id];
      segment->size = segment_size;
      segment->private_pool = private_pool;
      add(reserved_, segment_size);
    }
    segment->used += size;
    const std::int64_t block = next_id_++;
    blocks_[block] = {size, segment};
    add(allocated_, size);
    return block;
  }
  void free(std::int64_t block) {
    const auto it = blocks_.find(block);
    if (it == blocks_.end()) throw std::logic_error("simulated allocator: free of an unknown block");
    it->second.segment->used -= it->second.size;
    add(allocated_, -it->second.size);
    blocks_.erase(it);
  }
  // A matmul: the first one of the process allocates the workspace, which is never freed.
  void first_matmul() {
    if (workspace_ < 0) workspace_ = malloc(kWorkspaceBytes);
  }
  // The graph is gone: its private pool may be emptied now.
  void release_private_pools() {
    for (auto& [id, s] : segments_) s.private_pool = false;
  }

  AllocatorReading read() const override {
    ++reads_;
    return {allocated_.current, allocated_.peak, reserved_.current, reserved_.peak};
  }
  void empty_cache() override {
    ++empties_;
    for (auto it = segments_.begin(); it != segments_.end();) {
      if (it->second.used == 0 && !it->second.private_pool) {
        add(reserved_, -it->second.size);
        it = segments_.erase(it);
      } else {
        ++it;
      }
    }
  }
  void reset_peaks() override {
    allocated_.peak = allocated_.current;
    reserved_.peak = reserved_.current;
  }
  void make_process_wide_state() override { first_matmul(); }

  int empties() const { return empties_; }
  int reads() const { return reads_; }

 private:
  struct Stat {
    std::int64_t current = 0;
    std::int64_t peak = 0;
  };
  struct Segment {
    std::int64_t size = 0;
    std::int64_t used = 0;
    bool private_pool = false;
  };
  struct Block {
    std::int64_t size = 0;
    Segment* segment = nullptr;
  };
  static std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }
  static void add(Stat& s, std::int64_t bytes) {
    s.current += bytes;
    s.peak = std::max(s.peak, s.current);
  }

  std::map<std::int64_t, Segment> segments_;  // std::map: pointers to its values stay valid
  std::map<std::int64_t, Block> blocks_;
  Stat allocated_;
  Stat reserved_;
  std::int64_t next_id_ = 1;
  std::int64_t workspace_ = -1;
  int empties_ = 0;
  mutable int reads_ = 0;
};

// Installs a simulated allocator for the test's scope (device_allocator() returns it).
class UseSimulatedAllocator {
 public:
  explicit UseSimulatedAllocator(SimulatedCachingAllocator& allocator) { use_device_allocator_for_tests(&allocator); }
  ~UseSimulatedAllocator() { use_device_allocator_for_tests(nullptr); }
  UseSimulatedAllocator(const UseSimulatedAllocator&) = delete;
  UseSimulatedAllocator& operator=(const UseSimulatedAllocator&) = delete;
};

}  // namespace tipbench::testing
