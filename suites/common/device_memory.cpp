#include "device_memory.h"

#include "tensor_extent.h"
#include "tipbench/common/checked_text.h"
#include "tipbench/device/device_allocator.h"
#include "tipbench/common/json_number.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>
#include <malloc.h>
#include <torch/cuda.h>

#include <fmt/format.h>

#include <algorithm>

namespace tipbench::suites {

std::int64_t bytes_in_use(const c10::Device& device) {
  if (device.is_cuda()) {
    const auto index = device.has_index() ? device.index() : c10::DeviceIndex(0);
    return c10::cuda::CUDACachingAllocator::getDeviceStats(index).allocated_bytes[0].current;
  }
  const struct mallinfo2 info = ::mallinfo2();
  return static_cast<std::int64_t>(info.uordblks + info.hblkhd);
}

std::int64_t device_malloc_calls(const c10::Device& device) {
  if (!device.is_cuda()) return 0;
  const auto index = device.has_index() ? device.index() : c10::DeviceIndex(0);
  return c10::cuda::CUDACachingAllocator::getDeviceStats(index).num_device_alloc;
}

void to_json(nlohmann::json& j, const BatchSearch& s) {
  j = {{"largest", s.largest}, {"probes", nlohmann::json::array()}};
  if (s.index_limit > 0) {
    j["tensor_elements_per_sample"] = s.tensor_elements_per_sample;
    j["index_limit"] = s.index_limit;
  }
  if (!s.index_limit_error.empty()) j["index_limit_error"] = s.index_limit_error;
  if (!s.limited_by.empty()) j["limited_by"] = s.limited_by;
  for (const auto& p : s.probes) {
    nlohmann::json probe = {{"batch", p.batch}, {"fits", p.fits}};
    if (!p.fits) probe["error"] = p.error;
    j["probes"].push_back(std::move(probe));
  }
}

BatchSearch batch_search_from_json(const nlohmann::json& j) {
  BatchSearch s;
  s.largest = json_integer<std::int64_t>(j, "largest");
  if (s.largest < 1) throw std::invalid_argument("a recorded largest-batch search found no batch");
  const auto& probes = j.at("probes");
  if (!probes.is_array() || probes.size() > 1000)
    throw std::invalid_argument("a recorded largest-batch search's probes are not a list of at most 1000");
  for (const auto& p : probes) {
    BatchProbe probe{json_integer<std::int64_t>(p, "batch"), p.at("fits").get<bool>(), p.value("error", "")};
    check_name("a largest-batch probe's error", probe.error);
    s.probes.push_back(std::move(probe));
  }
  if (j.contains("index_limit")) {
    s.tensor_elements_per_sample = json_integer<std::int64_t>(j, "tensor_elements_per_sample");
    s.index_limit = json_integer<std::int64_t>(j, "index_limit");
  }
  s.index_limit_error = j.value("index_limit_error", "");
  check_name("a largest-batch search's index_limit_error", s.index_limit_error);
  s.limited_by = j.value("limited_by", "");
  if (!s.limited_by.empty() && s.limited_by != "memory" && s.limited_by != "index_limit" &&
      s.limited_by != "search_limit")
    throw std::invalid_argument(
        "a recorded largest-batch search's limited_by is not memory, index_limit or search_limit");
  return s;
}

namespace {
std::string error_line(const std::exception& e) {
  const std::string text = e.what();
  return text.substr(0, text.find('\n'));
}
}  // namespace

std::string largest_batch_words(const BatchSearch& s) {
  if (s.limited_by == "index_limit")
    return fmt::format("{} (the 32-bit index limit: memory was not reached)", s.largest);
  if (s.limited_by == "search_limit") return fmt::format("{} (the search's limit: memory was not reached)", s.largest);
  return std::to_string(s.largest);
}

BatchSearch search_largest_batch(const std::function<void(std::int64_t)>& attempt, std::int64_t start,
                                 std::int64_t limit) {
  BatchSearch search;
  auto fits = [&](std::int64_t batch) {
    BatchProbe probe{batch, true, ""};
    try {
      attempt(batch);
    } catch (const DeviceUnusable&) {
      throw;
    } catch (const std::exception& e) {
      // Recorded, and the search goes on with a smaller batch: out of memory, or another refusal of
      // a large batch (ATen's 32-bit index checks raise c10::Error before memory runs out).
      const std::string message = e.what();
      probe.fits = false;
      probe.error = message.substr(0, message.find('\n'));
    }
    search.probes.push_back(probe);
    return probe.fits;
  };
  limit = std::max<std::int64_t>(1, limit);
  std::int64_t fit = 0, fail = 0;  // the largest batch that fitted, the smallest that did not
  std::int64_t batch = std::clamp<std::int64_t>(start, 1, limit);
  if (fits(batch)) {
    fit = batch;
    while (fit < limit) {
      batch = std::min(2 * fit, limit);
      if (!fits(batch)) {
        fail = batch;
        break;
      }
      fit = batch;
    }
  } else {
    fail = batch;
    while (batch > 1) {
      batch /= 2;
      if (fits(batch)) {
        fit = batch;
        break;
      }
      fail = batch;
    }
  }
  if (fit == 0) return search;
  while (fail > 0 && fail - fit > std::max<std::int64_t>(1, fit / 16)) {
    const std::int64_t mid = fit + (fail - fit) / 2;
    if (fits(mid)) {
      fit = mid;
    } else {
      fail = mid;
    }
  }
  search.largest = fit;
  return search;
}

BatchSearch search_largest_workload_batch(const c10::Device& device,
                                          const std::function<std::unique_ptr<Workload>(std::int64_t)>& make,
                                          std::int64_t start, std::int64_t limit) {
  auto synchronize = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : 0);
  };
  auto* allocator = tipbench::device_allocator(device);
  auto attempt = [&](std::int64_t batch) {
    if (allocator) allocator->empty_cache();
    try {
      auto workload = make(batch);
      workload->step();
      workload->step();
      synchronize();
    } catch (const c10::OutOfMemoryError&) {
      throw;
    } catch (const std::exception& e) {
      // Any other failure may be a sticky CUDA error that poisons the context (review D14): then
      // a synchronisation fails too, and nothing after it could run.
      if (device.is_cuda()) {
        try {
          synchronize();
        } catch (const std::exception& lost) {
          const std::string why = e.what();
          throw DeviceUnusable(fmt::format("the device is unusable after the probe at batch {} failed ({}): {}", batch,
                                           why.substr(0, why.find('\n')), error_line(lost)));
        }
      }
      throw;
    }
  };
  // The 32-bit index cap first; if even that small step fails, the search runs uncapped and
  // meets the same failure at its own batches, where it is recorded.
  std::int64_t per_sample = 0;
  std::string extent_error;
  try {
    per_sample = largest_tensor_elements_per_sample(make);
    synchronize();
  } catch (const std::exception& e) {
    const std::string message = e.what();
    extent_error = message.substr(0, message.find('\n'));
  }
  const std::int64_t index_limit = batch_limit_for_32bit_indexing(per_sample);
  BatchSearch search = search_largest_batch(attempt, start, std::min(limit, index_limit));
  search.tensor_elements_per_sample = per_sample;
  search.index_limit = per_sample > 0 ? index_limit : 0;
  search.index_limit_error = extent_error;
  const bool any_failed =
      std::any_of(search.probes.begin(), search.probes.end(), [](const BatchProbe& p) { return !p.fits; });
  search.limited_by = any_failed                                                ? "memory"
                      : search.index_limit > 0 && search.largest == index_limit ? "index_limit"
                                                                                : "search_limit";
  if (allocator) allocator->empty_cache();
  return search;
}

std::optional<std::string> largest_batch_search_unavailable(const c10::Device& device) {
  if (device.is_cuda()) return std::nullopt;
  return "the largest-batch search needs a CUDA device: it grows the batch until the caching allocator "
         "raises out-of-memory, and a CPU run has no such error to catch (it swaps or is killed); this run "
         "is on " +
         device.str();
}

BatchSearch LargestBatchSearches::find(const std::string& arm_key, const c10::Device& device,
                                       const std::function<std::unique_ptr<Workload>(std::int64_t)>& make,
                                       std::int64_t start) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = searches_.find(arm_key); it != searches_.end()) return it->second;
  return searches_[arm_key] = search_largest_workload_batch(device, make, start, /*limit=*/1 << 16);
}

void LargestBatchSearches::remember(const std::string& arm_key, BatchSearch search) {
  std::lock_guard<std::mutex> lock(mutex_);
  searches_[arm_key] = std::move(search);
}

}  // namespace tipbench::suites
