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
}

TEST(PreallocateSuite, TheNoteCountsEachArmsDeviceAllocations) {
  tipbench::SuiteResult r;
  tipbench::CaseResult c;
  c.name = "preallocate/model:resnet50/batch:128/shapes:ascending";
  c.arms = {tipbench::testing::measured_arm("none", {{"preallocate", "none"}}, 100),
            tipbench::testing::measured_arm("max_shape", {{"preallocate", "max_shape"}}, 101)};
  c.arms[0].metrics["device_mallocs"].median = 14;
  c.arms[1].metrics["device_mallocs"].median = 0;
  r.cases = {c};
  const auto notes = suite_named("preallocate").notes(r, tipbench::quick_settings());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0], "device allocations while timed (median per trial): none 14, max_shape 0"))
      << notes[0];
  // A CPU run has no such count and no note.
  r.cases[0].arms[0].metrics.clear();
  r.cases[0].arms[1].metrics.clear();
  EXPECT_TRUE(suite_named("preallocate").notes(r, tipbench::quick_settings()).empty());
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
