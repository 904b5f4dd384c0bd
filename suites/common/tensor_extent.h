// How many elements the largest tensor of a step holds per sample. CUDA kernels that index with
// 32-bit integers refuse a tensor of more than 2^31 - 1 elements (e.g. max_pool2d's
// safe_downcast<int>(numel) in ATen/native/cuda/DilatedMaxPool2d.cu raises "integer out of
// range"): the largest-batch search must not try a batch past that. Measured, not declared per
// model, by observing every ATen op's inputs and outputs (at::RecordFunction) during one step at
// two small batches: a tensor that grows with the batch grows by its per-sample size. Example:
//   auto per_sample = largest_tensor_elements_per_sample([&](std::int64_t b) { return make(b); });
//   std::int64_t cap = batch_limit_for_32bit_indexing(per_sample);   // e.g. 2674 for resnet50 at 224 px
#pragma once

#include "tipbench/suite/suite.h"

#include <cstdint>
#include <functional>
#include <memory>

namespace tipbench::suites {

inline constexpr std::int64_t kMax32BitIndexedElements = 2147483647;  // 2^31 - 1

// Builds the workload at two small batches (2 and 4), runs one untimed step of each, then one
// observed step, and returns the largest per-sample growth of any op's tensor. Ops run in the
// same order at both batches (the reference models have no data-dependent control flow); when
// they do not, the largest tensor of the larger batch divided by its batch (an upper bound).
std::int64_t largest_tensor_elements_per_sample(const std::function<std::unique_ptr<Workload>(std::int64_t)>& make);

// The largest batch whose tensors all stay within kMax32BitIndexedElements; at least 1.
std::int64_t batch_limit_for_32bit_indexing(std::int64_t elements_per_sample);

}  // namespace tipbench::suites
