// Time-to-accuracy: train a reference model from scratch on the learnable in-memory task until it
// reaches a target test accuracy. It is not a steady state, so one harness step is one epoch
// (every training batch, then the test-set accuracy, read on the host). The untimed warm-up
// epochs only warm the allocator and kernels: begin_measurement() starts training again from
// fresh weights, so the timed epochs are epochs 1, 2, ... of a real run. Example:
//   TimeToAccuracySpec spec{.model = "small_cnn", .batch_size = 256, .peak_lr = 0.4, .warmup_epochs = 2};
//   auto w = make_time_to_accuracy_workload(context, spec);
//   ... w->metrics() -> epochs_to_target, seconds_to_target, accuracy_at_epoch_001, ...
#pragma once

#include "learnable_data.h"
#include "tipbench/suite/suite.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tipbench::suites {

struct TimeToAccuracySpec {
  std::string model;
  std::int64_t batch_size = 32;
  double peak_lr = 0.05;             // already scaled for the batch (linear_scaled_lr)
  double warmup_epochs = 0;          // linear warm-up length (0: none), in epochs of this batch size
  std::int64_t schedule_epochs = 6;  // warm-up + cosine decay; the LR stays at 0 after it
  double target_accuracy = 0.75;
  LearnableDataOptions data;
  std::uint64_t seed = 0;  // weights and shuffling (the data has its own seed)
};

// metrics(): epochs_to_target and seconds_to_target (present only when the target was reached;
// seconds are host time from the first timed epoch's start to the end of the epoch that reached
// it, evaluation included), reached_target (0 or 1), best_accuracy, final_accuracy,
// accuracy_at_epoch_NNN for every timed epoch, and seed.
std::unique_ptr<Workload> make_time_to_accuracy_workload(const SuiteContext& context, const TimeToAccuracySpec& spec);

}  // namespace tipbench::suites
