// The `dp` arm: nn.DataParallel over every visible GPU, one process driving them all: the batch
// scattered, the module's parameters and buffers broadcast to replicas made once (as
// torch/nn/parallel/replicate.py does; not LibTorch's data_parallel, which deep-clones and
// re-initialises the module every call), the replicas run in parallel threads, the outputs
// gathered on cuda:0, gradients reduced back onto cuda:0. Per-device batch B, so the step trains
// on B x GPUs samples. Needs at least 2 GPUs.
// Example:
//   auto w = make_dp_workload(context, spec);   // spec.batch_size = per-device batch
#pragma once

#include "common/training.h"
#include "tipbench/suite/suite.h"

#include <memory>

namespace tipbench::distributed {

std::unique_ptr<Workload> make_dp_workload(const SuiteContext& context, const suites::TrainingSpec& spec);

}  // namespace tipbench::distributed
