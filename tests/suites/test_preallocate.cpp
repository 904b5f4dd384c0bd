// The preallocate suite: its plan (CNNs only, inputs that grow), the ascending schedule, and that
// the pre-allocation step leaves the model exactly as it found it while a plain forward in train
// mode would not (BatchNorm's running statistics), so both arms train the same model; on CUDA,
// that the pre-allocated arm asks the device for no more memory while timed than the baseline.
#include "common/input_shapes.h"
#include "common/training.h"
#include "preallocate/preallocate_step.h"
#include "cuda_required.h"
#include "suite_plan.h"
#include "tipbench/models/model.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;
using tipbench::testing::trial_of;

std::vector<torch::Tensor> state_of(const torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p.detach().clone());
  for (const auto& b : m.buffers()) out.push_back(b.clone());
  return out;
}

bool same_state(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!torch::equal(a[i], b[i])) return false;
  }
  return true;
}

TEST(PreallocateSuite, CnnsOnlyWithTheReasonAndInputsThatGrow) {
  const auto& s = suite_named("preallocate");
  auto context = cpu_context(true);
  context.models = {"small_cnn", "vit_ti_16"};
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"none", "max_shape"}));
  EXPECT_EQ(tipbench::level(cases[0].params, "shapes"), "ascending");
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[1]));
  const auto why = s.skip_reason(context, cases[1], cases[1].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "position embedding")) << *why;
  // A cold process is the tip's case: every trial starts one.
  EXPECT_EQ(s.isolation(tipbench::testing::cuda_context()), tipbench::Isolation::fresh_process);
  EXPECT_EQ(s.isolation(context), tipbench::Isolation::fresh_process);
}

TEST(AscendingShapes, GrowFromHalfTheImageSizeToItThenStartAgain) {
  using tipbench::suites::ascending_side;
  using tipbench::suites::kAscendingSteps;
  for (std::int64_t base : {32, 224}) {
    SCOPED_TRACE(base);
    EXPECT_EQ(ascending_side(base, 0), base / 2);
    EXPECT_EQ(ascending_side(base, kAscendingSteps - 1), base);
    for (std::int64_t i = 1; i < kAscendingSteps; ++i) EXPECT_GT(ascending_side(base, i), ascending_side(base, i - 1));
    EXPECT_EQ(ascending_side(base, kAscendingSteps), base / 2);
  }
}

TEST(PreallocateStep, LeavesParametersAndBatchNormStatisticsAsTheyWereWithoutGradients) {
  torch::manual_seed(0);
  auto model = tipbench::models::make_model("small_cnn");
  model.ptr()->train();
  const auto input = torch::randn({8, 3, 32, 32});
  const auto labels = torch::randint(10, {8}, torch::kLong);
  const auto before = state_of(*model.ptr());

  tipbench::suites::preallocate_step(model, input, labels, tipbench::suites::Precision::fp32);
  EXPECT_TRUE(same_state(before, state_of(*model.ptr())));
  for (const auto& p : model.ptr()->parameters()) EXPECT_FALSE(p.grad().defined());

  // The test can fail: a forward in train mode alone moves the running statistics.
  model.forward(input);
  EXPECT_FALSE(same_state(before, state_of(*model.ptr())));
}

TEST(PreallocateSuite, BothArmsTrainOnAscendingShapesAndTheTreatmentSaysItPreallocated) {
  const auto none = trial_of("preallocate", "none");
  const auto max_shape = trial_of("preallocate", "max_shape");
  EXPECT_EQ(none.info.at("input_shapes"), "ascending");
  EXPECT_FALSE(none.info.contains("preallocated")) << none.info.dump();
  EXPECT_TRUE(max_shape.info.at("preallocated").get<bool>()) << max_shape.info.dump();
  EXPECT_GT(max_shape.trial.throughput_samples_per_s, 0);
  // The allocator's device allocations are counted on CUDA only.
  EXPECT_FALSE(max_shape.trial.metrics.contains("device_mallocs"));
  // The pre-allocation is timed (the tip's cost), and a trial times whole cycles of sizes, two at least.
  EXPECT_GT(max_shape.trial.metrics.at("preallocate_ms"), 0);
  EXPECT_FALSE(none.trial.metrics.contains("preallocate_ms"));
  EXPECT_GE(max_shape.trial.step_times_ms.size(), 16u);
  EXPECT_EQ(max_shape.trial.step_times_ms.size() % 8, 0u);
}

// An arm of 4 blocks whose trials time two cycles of sizes: the first cycle's steps take
// `first_ms`, the later ones `steady_ms` (block b adds b tenths of a percent to all three), after a pre-allocation of
// `preallocate_ms` (none when 0).
tipbench::ArmResult cycled_arm(const std::string& name, double first_ms, double steady_ms, double preallocate_ms) {
  tipbench::ArmResult a;
  a.arm = name;
  a.levels = {{"preallocate", name}};
  for (int b = 0; b < 4; ++b) {
    tipbench::Trial t;
    t.block = b;
    t.samples_per_step = 32;
    for (int i = 0; i < 16; ++i) t.step_times_ms.push_back((i < 8 ? first_ms : steady_ms) * (1 + 0.001 * b));
    t.throughput_samples_per_s = 1000.0 * 32 / steady_ms;
    if (preallocate_ms > 0) t.metrics["preallocate_ms"] = preallocate_ms * (1 + 0.001 * b);
    a.trials.push_back(t);
  }
  tipbench::summarize_arm(a);
  return a;
}

TEST(PreallocateSuite, TheNoteComparesTheFirstStepsAndTheSteadyStateAndCountsDeviceAllocations) {
  tipbench::SuiteResult r;
  tipbench::CaseResult c;
  c.name = "preallocate/model:resnet50/batch:128/shapes:ascending";
  // The first 8 steps: 8 x 10 ms without, 20 ms + 8 x 6 ms with the pre-allocation.
  c.arms = {cycled_arm("none", 10, 5, 0), cycled_arm("max_shape", 6, 5, 20)};
  c.arms[0].baseline = true;
  c.arms[0].metrics["device_mallocs"].median = 14;
  c.arms[1].metrics["device_mallocs"].median = 0;
  r.cases = {c};
  const auto notes = suite_named("preallocate").notes(r, tipbench::MeasureSettings{});
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_TRUE(contains(notes[0],
                       "first steps (the pre-allocation and the first 8 steps, median): none 80.1 ms, "
                       "max_shape 68.1 ms, x0.850 [0.850, 0.850] faster (lower is better); steady state "
                       "(mean step after the first cycle): x1.000 [1.000, 1.000] no detectable difference"))
      << notes[0];
  EXPECT_TRUE(contains(notes[1], "device allocations while timed (median per trial): none 14, max_shape 0"))
      << notes[1];
  // A CPU run has no allocation count, and a run whose arm failed no comparison.
  r.cases[0].arms[0].metrics.clear();
  r.cases[0].arms[1].metrics.clear();
  r.cases[0].arms[1].status = tipbench::ArmStatus::failed;
  EXPECT_TRUE(suite_named("preallocate").notes(r, tipbench::MeasureSettings{}).empty());
}

TEST(PreallocateSuite_CUDA, ThePreallocatedArmAsksTheDeviceForNoMoreMemoryWhileTimed) {
  TIPBENCH_REQUIRE_CUDA();
  const auto& s = suite_named("preallocate");
  auto context = cpu_context(true);
  context.device = c10::Device(c10::kCUDA, 0);
  context.models = {"small_cnn"};
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 1u);
  auto mallocs = [&](const tipbench::ArmSpec& arm) {
    const auto t = tipbench::run_trial(s, context, cases[0], arm, tipbench::testing::short_trial(), 0, 0);
    return t.trial.metrics.at("device_mallocs");
  };
  const double none = mallocs(cases[0].arms[0]);
  const double max_shape = mallocs(cases[0].arms[1]);
  EXPECT_LE(max_shape, none) << "none " << none << ", max_shape " << max_shape;
}

}  // namespace
