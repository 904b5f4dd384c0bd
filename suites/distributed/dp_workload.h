// The `dp` arm: torch::nn::parallel::data_parallel over every visible GPU, one process driving
// them all (the module is replicated to each GPU on every call, the batch scattered, the outputs
// gathered on cuda:0). Per-device batch B, so the step trains on B x GPUs samples.
// Example:
//   auto w = make_dp_workload(context, spec);   // spec.batch_size = per-device batch
#pragma once

#include "common/training.h"
#include "tipbench/suite.h"

#include <memory>

namespace tipbench::distributed {

std::unique_ptr<Workload> make_dp_workload(const SuiteContext& context, const suites::TrainingSpec& spec);

}  // namespace tipbench::distributed
