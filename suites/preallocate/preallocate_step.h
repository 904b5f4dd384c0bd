// The preallocate suite's treatment, apart from its suite file so that a test can call it.
#pragma once

#include "common/autocast.h"

#include <torch/nn/modules/container/any.h>

namespace tipbench::suites {

// The pre-allocation step of the PyTorch Tuning Guide (the preallocate suite's policy): one forward and
// backward of `input` (the largest the run will see) in the model's current mode, no optimizer
// step, gradients set to None, and the module's buffers (BatchNorm's running statistics) put back:
// the caching allocator then holds blocks the size of that step, and the model is as it was.
void preallocate_step(torch::nn::AnyModule& model, const torch::Tensor& input, const torch::Tensor& labels,
                      Precision precision);

}  // namespace tipbench::suites
