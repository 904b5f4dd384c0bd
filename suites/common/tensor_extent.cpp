#include "tensor_extent.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace tipbench::suites {

namespace {

// The element counts of every tensor an observed op takes or returns, in call order. A
// RecordFunction callback is a plain function pointer, hence the one process-wide recorder; the
// callback is thread-local, and autograd carries it to its backward threads (at::ThreadLocalState).
struct ExtentRecorder {
  std::mutex mutex;
  std::vector<std::int64_t> extents;
};
ExtentRecorder* g_recorder = nullptr;
std::mutex g_recording;  // one observed step at a time

void note(const c10::IValue& value, std::vector<std::int64_t>& out) {
  if (value.isTensor()) {
    const auto& t = value.toTensor();
    if (t.defined()) out.push_back(t.numel());
  } else if (value.isTensorList()) {
    for (const auto& t : value.toTensorList()) {
      const at::Tensor& tensor = t;
      if (tensor.defined()) out.push_back(tensor.numel());
    }
  }
}

void record(const std::vector<std::int64_t>& seen) {
  std::lock_guard<std::mutex> lock(g_recorder->mutex);
  g_recorder->extents.insert(g_recorder->extents.end(), seen.begin(), seen.end());
}

// An op's inputs can be read only in the start callback (they live on the caller's stack), its
// outputs only in the end callback (at/record_function.h).
std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  std::vector<std::int64_t> seen;
  for (const auto& v : fn.inputs()) note(v, seen);
  record(seen);
  return nullptr;
}

void on_op_end(const at::RecordFunction& fn, at::ObserverContext*) {
  std::vector<std::int64_t> seen;
  for (const auto& v : fn.outputs()) note(v, seen);
  record(seen);
}

std::vector<std::int64_t> observed_step(Workload& workload) {
  std::lock_guard<std::mutex> one_at_a_time(g_recording);
  ExtentRecorder recorder;
  g_recorder = &recorder;
  const auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(&on_op_start, &on_op_end)
                                                     .needsInputs(true)
                                                     .needsOutputs(true)
                                                     .scopes({at::RecordScope::FUNCTION}));
  try {
    workload.step();
  } catch (...) {
    at::removeCallback(handle);
    g_recorder = nullptr;
    throw;
  }
  at::removeCallback(handle);
  g_recorder = nullptr;
  return std::move(recorder.extents);
}

std::vector<std::int64_t> extents_at(const std::function<std::unique_ptr<Workload>(std::int64_t)>& make,
                                     std::int64_t batch) {
  auto workload = make(batch);
  workload->step();  // the first step differs (optimizer state, lazy buffers): not compared
  return observed_step(*workload);
}

}  // namespace

std::int64_t largest_tensor_elements_per_sample(const std::function<std::unique_ptr<Workload>(std::int64_t)>& make) {
  constexpr std::int64_t kSmall = 2, kLarge = 4;  // BatchNorm in training needs more than one value per channel
  const auto small = extents_at(make, kSmall);
  const auto large = extents_at(make, kLarge);
  std::int64_t per_sample = 0;
  if (small.size() == large.size()) {
    for (std::size_t i = 0; i < small.size(); ++i) {
      per_sample = std::max(per_sample, (large[i] - small[i]) / (kLarge - kSmall));
    }
  } else {
    for (const auto n : large) per_sample = std::max(per_sample, (n + kLarge - 1) / kLarge);
  }
  return per_sample;
}

std::int64_t batch_limit_for_32bit_indexing(std::int64_t elements_per_sample) {
  if (elements_per_sample <= 0) return kMax32BitIndexedElements;
  return std::max<std::int64_t>(1, kMax32BitIndexedElements / elements_per_sample);
}

}  // namespace tipbench::suites
