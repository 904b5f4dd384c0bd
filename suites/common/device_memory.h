// Device memory as the compute suites see it: the bytes in use right now, and the largest batch
// that fits (found by trying, catching out-of-memory errors). Example:
//   auto before = bytes_in_use(device);  auto loss = forward(x);  held = bytes_in_use(device) - before;
//   BatchSearch s = search_largest_batch([&](std::int64_t b) { train_two_steps(b); }, 64, 8192);
//   s.largest;   // 0 when not even `start`'s halvings down to 1 fit; s.probes records every try
#pragma once

#include "tipbench/suite/suite.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tipbench::suites {

// Bytes allocated and not yet freed. CUDA: the caching allocator's allocated bytes (tensors,
// not its cache). CPU: glibc's heap in use (mallinfo2: arena + mmapped chunks), which includes
// every tensor LibTorch holds on the CPU. A host-side read: nothing synchronizes.
std::int64_t bytes_in_use(const c10::Device& device);
// CUDA: how many times the caching allocator has asked the device for memory (cudaMalloc or a
// mapping) since the process started; a step served from its cache asks for none. 0 elsewhere.
std::int64_t device_malloc_calls(const c10::Device& device);

struct BatchProbe {
  std::int64_t batch = 0;
  bool fits = false;
  std::string error;  // why it did not fit (the error's first line): out of memory, or any other failure
};

struct BatchSearch {
  std::int64_t largest = 0;        // the largest batch that fitted; 0 when none did
  std::vector<BatchProbe> probes;  // in the order tried
  // The workload search only: the largest tensor's elements per sample (measured) and the batch
  // above which a tensor would pass 2^31 - 1 elements, which the search never tries (0: not measured).
  std::int64_t tensor_elements_per_sample = 0;
  std::int64_t index_limit = 0;
  std::string index_limit_error;  // why that measurement failed (the search then ran uncapped)
  // What stopped the search: "memory" (a larger batch failed), "index_limit" (the 32-bit cap
  // above: every probe fitted, memory was never reached) or "search_limit" (the caller's limit).
  std::string limited_by;
};
// "2674" or "2674 (the 32-bit index limit: memory was not reached)": how a note says the batch.
std::string largest_batch_words(const BatchSearch& s);
void to_json(nlohmann::json& j, const BatchSearch& s);
// The search an arm's info recorded (a resumed run's partial file: read as input from elsewhere);
// std::invalid_argument or nlohmann's exceptions when it is not one.
BatchSearch batch_search_from_json(const nlohmann::json& j);

// A probe left the device unusable (a sticky CUDA error: an illegal address, a launch failure):
// no later probe or trial can run, so the search stops with it instead of reading it as "does not
// fit".
struct DeviceUnusable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// attempt(b) runs the workload at batch b and throws when it does not fit. Any exception counts as
// "does not fit", its first line kept in the probe: out of memory, but also what else large
// batches raise before memory runs out (a kernel's 32-bit index refusing a tensor, a cuDNN or
// cuBLAS failure); a workload broken at every batch ends with largest 0 and its reason in the
// probes (not an exception), and fails its own arm only. The search halves from
// `start` until a batch fits, doubles until one does not or `limit` is passed, then bisects
// until the gap between the largest fit and the smallest failure is at most 1/16 of the fit.
BatchSearch search_largest_batch(const std::function<void(std::int64_t)>& attempt, std::int64_t start,
                                 std::int64_t limit);

// The search above for a workload on a CUDA device: each attempt empties the allocator's cache,
// builds the workload at the batch and runs two steps (the second with optimizer state in
// place), then synchronizes, so an out-of-memory error surfaces inside the attempt. The cache is
// emptied again at the end, so the trials that follow start from a clean allocator. `limit` is
// lowered to the batch whose largest tensor stays within 2^31 - 1 elements (tensor_extent.h),
// measured first (if that fails, the search runs uncapped and the reason is kept).
BatchSearch search_largest_workload_batch(const c10::Device& device,
                                          const std::function<std::unique_ptr<Workload>(std::int64_t)>& make,
                                          std::int64_t start, std::int64_t limit);

// Why the largest-batch search cannot run on `device` (anything but CUDA); nullopt when it can.
std::optional<std::string> largest_batch_search_unavailable(const c10::Device& device);

// A suite's largest-batch searches, one per arm and process: each case's arms are searched
// before its first trial (so no trial's memory peak includes a failed attempt) and the trials
// reuse the answer; a fresh-process trial searches again. Thread-safe.
class LargestBatchSearches {
 public:
  BatchSearch find(const std::string& arm_key, const c10::Device& device,
                   const std::function<std::unique_ptr<Workload>(std::int64_t)>& make, std::int64_t start);
  // An answer found before (a resumed run's), which find then returns without searching.
  void remember(const std::string& arm_key, BatchSearch search);

 private:
  std::mutex mutex_;
  std::map<std::string, BatchSearch> searches_;
};

}  // namespace tipbench::suites
