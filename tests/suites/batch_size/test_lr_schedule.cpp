// The batch_size suite's pieces: the warm-up + cosine LR curve at known points and as a
// torch::optim::LRScheduler per parameter group; the linear scaling rule; the learnable dataset
// and the time-to-accuracy workload (it learns, and reports its curve). The largest-batch search
// is in test_largest_batch.cpp.
#include "batch_size/learnable_data.h"
#include "batch_size/lr_schedule.h"
#include "batch_size/time_to_accuracy.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <numbers>

namespace {

namespace s = tipbench::suites;

TEST(LinearScaling, ScalesWithTheBatch) {
  EXPECT_DOUBLE_EQ(s::linear_scaled_lr(0.1, 1024, 256), 0.4);
  EXPECT_DOUBLE_EQ(s::linear_scaled_lr(0.05, 32, 32), 0.05);
  EXPECT_THROW(s::linear_scaled_lr(0.1, 0, 256), std::invalid_argument);
}

TEST(WarmupCosine, KnownValues) {
  const s::WarmupCosineOptions o{.warmup_steps = 5, .total_steps = 25, .min_factor = 0.0};
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(0, o), 0.2);  // (0 + 1) / 5
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(2, o), 0.6);
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(4, o), 1.0);  // warm-up ends at the peak
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(5, o), 1.0);  // cosine starts at the peak
  EXPECT_NEAR(s::warmup_cosine_factor(10, o), 0.5 * (1 + std::cos(std::numbers::pi * 0.25)), 1e-15);
  EXPECT_NEAR(s::warmup_cosine_factor(15, o), 0.5, 1e-15);  // half way down
  EXPECT_NEAR(s::warmup_cosine_factor(24, o), 0.5 * (1 + std::cos(std::numbers::pi * 0.95)), 1e-15);
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(25, o), 0.0);
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(1000, o), 0.0);  // stays at the floor
  const s::WarmupCosineOptions floor{.warmup_steps = 0, .total_steps = 10, .min_factor = 0.1};
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(0, floor), 1.0);  // no warm-up: starts at the peak
  EXPECT_NEAR(s::warmup_cosine_factor(5, floor), 0.55, 1e-15);
  EXPECT_DOUBLE_EQ(s::warmup_cosine_factor(10, floor), 0.1);
}

TEST(WarmupCosine, RejectsBadOptions) {
  EXPECT_THROW(s::warmup_cosine_factor(-1, {.warmup_steps = 0, .total_steps = 10}), std::invalid_argument);
  EXPECT_THROW(s::warmup_cosine_factor(0, {.warmup_steps = 11, .total_steps = 10}), std::invalid_argument);
  EXPECT_THROW(s::warmup_cosine_factor(0, {.warmup_steps = 0, .total_steps = 0}), std::invalid_argument);
  EXPECT_THROW(s::warmup_cosine_factor(0, {.warmup_steps = 0, .total_steps = 10, .min_factor = 1.5}),
               std::invalid_argument);
}

TEST(WarmupCosineLR, DrivesEveryParameterGroupFromItsOwnPeak) {
  auto a = torch::zeros({2}, torch::requires_grad());
  auto b = torch::zeros({2}, torch::requires_grad());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{a}, std::make_unique<torch::optim::SGDOptions>(0.1));
  groups.emplace_back(std::vector<torch::Tensor>{b}, std::make_unique<torch::optim::SGDOptions>(0.01));
  torch::optim::SGD optimizer(groups, torch::optim::SGDOptions(0.1));
  const s::WarmupCosineOptions o{.warmup_steps = 4, .total_steps = 12};
  s::WarmupCosineLR scheduler(optimizer, o);
  EXPECT_EQ(scheduler.peak_lrs(), (std::vector<double>{0.1, 0.01}));
  auto current = [&] {
    return std::vector<double>{optimizer.param_groups()[0].options().get_lr(),
                               optimizer.param_groups()[1].options().get_lr()};
  };
  for (std::int64_t step = 0; step < 16; ++step) {
    // The LR that optimizer step `step` uses is the schedule's value at `step`.
    const auto lrs = current();
    EXPECT_NEAR(lrs[0], 0.1 * s::warmup_cosine_factor(step, o), 1e-15) << "step " << step;
    EXPECT_NEAR(lrs[1], 0.01 * s::warmup_cosine_factor(step, o), 1e-16) << "step " << step;
    EXPECT_EQ(lrs, scheduler.lrs_at(step));
    optimizer.step();
    scheduler.step();
  }
}

TEST(LearnableData, IsDeterministicAndShaped) {
  const s::LearnableDataOptions o{.train_samples = 64, .test_samples = 32, .classes = 4, .image_size = 8, .seed = 5};
  const auto a = s::make_learnable_data(o, torch::kCPU);
  const auto b = s::make_learnable_data(o, torch::kCPU);
  EXPECT_TRUE(torch::equal(a.train_images, b.train_images));
  EXPECT_TRUE(torch::equal(a.test_labels, b.test_labels));
  EXPECT_EQ(a.train_images.sizes(), (std::vector<int64_t>{64, 3, 8, 8}));
  EXPECT_EQ(a.test_images.sizes(), (std::vector<int64_t>{32, 3, 8, 8}));
  EXPECT_GE(a.train_labels.min().item<int64_t>(), 0);
  EXPECT_LT(a.train_labels.max().item<int64_t>(), 4);
  auto other = o;
  other.seed = 6;
  EXPECT_FALSE(torch::equal(a.train_images, s::make_learnable_data(other, torch::kCPU).train_images));
  EXPECT_THROW(s::make_learnable_data({.train_samples = 0}, torch::kCPU), std::invalid_argument);
}

// The workload trains from fresh weights after begin_measurement and learns the task: the test
// accuracy after three epochs is far above chance (10 classes: 0.1).
TEST(TimeToAccuracy, LearnsAndReportsItsCurve) {
  tipbench::SuiteContext context;
  s::TimeToAccuracySpec spec;
  spec.model = "small_cnn";
  spec.batch_size = 32;
  spec.peak_lr = 0.05;
  spec.schedule_epochs = 3;
  spec.target_accuracy = 0.5;
  spec.data = {.train_samples = 512, .test_samples = 256, .image_size = 8, .noise = 2.0};
  auto workload = s::make_time_to_accuracy_workload(context, spec);
  workload->step();  // a warm-up epoch: not part of the curve
  workload->begin_measurement();
  for (int e = 0; e < 3; ++e) workload->step();
  const auto m = workload->metrics();
  ASSERT_TRUE(m.count("accuracy_at_epoch_003"));
  EXPECT_FALSE(m.count("accuracy_at_epoch_004"));
  EXPECT_GT(m.at("best_accuracy"), 0.5);
  EXPECT_EQ(m.at("reached_target"), 1.0);
  EXPECT_GE(m.at("epochs_to_target"), 1.0);
  EXPECT_LE(m.at("epochs_to_target"), 3.0);
  EXPECT_GT(m.at("seconds_to_target"), 0.0);
  EXPECT_EQ(workload->samples_per_step(), 512);
  EXPECT_EQ(workload->info().at("steps_per_epoch"), 16);
}

}  // namespace
