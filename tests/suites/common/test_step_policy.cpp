// The training step's policies (suites/common/step_policy.h): a policy's hook changes the step
// (the batch it trains on, whether gradients are zeroed), two policies replacing one hook are
// refused naming both, and what a CUDA graph cannot capture is asked of the policies and the spec.
#include "common/input_shapes.h"
#include "common/step_policy.h"
#include "suite_plan.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace s = tipbench::suites;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;

s::TrainingSpec small_spec() {
  s::TrainingSpec spec;
  spec.model = "small_cnn";
  spec.batch_size = 4;
  return spec;
}

// Never zeroes the gradients (counting the calls): backward then adds to the last step's.
class KeepGradients final : public s::Policy<KeepGradients> {
 public:
  std::string name() const override { return "keep gradients"; }
  void zero_grad(s::StepState&) override { ++calls; }
  int calls = 0;
};

// Records the first parameter after every step, and the loss.
class Recorder final : public s::Policy<Recorder> {
 public:
  std::string name() const override { return "recorder"; }
  void after_step(s::StepState& state, const at::Tensor& loss) override {
    first_parameter.push_back(state.model().ptr()->parameters()[0].detach().clone());
    losses.push_back(loss.item<double>());
  }
  std::vector<torch::Tensor> first_parameter;
  std::vector<double> losses;
};

std::vector<torch::Tensor> parameters_after_two_steps(s::TrainingSpec spec) {
  auto recorder = std::make_shared<Recorder>();
  spec.policies.push_back(recorder);
  torch::manual_seed(0);  // the same model and staged batch for every spec
  auto workload = s::make_training_workload(cpu_context(true), spec);
  workload->step();
  workload->step();
  return recorder->first_parameter;
}

TEST(StepPolicy, AZeroGradHookThatKeepsGradientsChangesTheSecondUpdate) {
  const auto plain = parameters_after_two_steps(small_spec());
  auto spec = small_spec();
  auto keep = std::make_shared<KeepGradients>();
  spec.policies.push_back(keep);
  const auto kept = parameters_after_two_steps(spec);
  EXPECT_EQ(keep->calls, 2);
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(kept.size(), 2u);
  // The first step starts from no gradients either way; the second adds the first's gradients.
  EXPECT_TRUE(torch::allclose(plain[0], kept[0]));
  EXPECT_FALSE(torch::allclose(plain[1], kept[1]));
}

// Feeds every step a batch chosen here; records whether timing had begun.
class ChosenBatch final : public s::Policy<ChosenBatch> {
 public:
  std::string name() const override { return "chosen batch"; }
  void prepare(s::StepState& state) override {
    batch = {torch::zeros({state.spec().batch_size, 3, state.image_size(), state.image_size()}),
             torch::full({state.spec().batch_size}, 3, torch::kLong)};
    // The loss the first step must see: the model before any update, in train mode as the step.
    expected_loss =
        torch::nn::functional::cross_entropy(state.model().forward(batch.images), batch.labels).item<double>();
  }
  s::StepInputs inputs(s::StepState&, bool timing) override {
    timing_seen.push_back(timing);
    return batch;
  }
  s::StepInputs batch;
  double expected_loss = 0;
  std::vector<bool> timing_seen;
};

TEST(StepPolicy, AnInputsHookChoosesTheBatchTheStepTrainsOn) {
  auto spec = small_spec();
  auto chosen = std::make_shared<ChosenBatch>();
  auto recorder = std::make_shared<Recorder>();
  spec.policies = {chosen, recorder};
  auto workload = s::make_training_workload(cpu_context(true), spec);
  workload->step();
  workload->begin_measurement();
  workload->step();
  EXPECT_EQ(chosen->timing_seen, (std::vector<bool>{false, true}));
  ASSERT_EQ(recorder->losses.size(), 2u);
  EXPECT_NEAR(recorder->losses[0], chosen->expected_loss, 1e-5);
  EXPECT_EQ(workload->info().at("input_shapes"), "fixed");  // no policy restated it
}

std::string refusal(const s::TrainingSpec& spec) {
  try {
    s::make_training_workload(cpu_context(true), spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(StepPolicy, TwoPoliciesReplacingOneHookAreRefusedNamingBoth) {
  auto spec = small_spec();
  spec.policies = {std::make_shared<KeepGradients>(), std::make_shared<Recorder>(), std::make_shared<KeepGradients>()};
  const auto why = refusal(spec);
  EXPECT_TRUE(contains(why, "'keep gradients' and 'keep gradients' both replace zero_grad")) << why;
  spec.policies = {std::make_shared<ChosenBatch>(), std::make_shared<s::InputShapesPolicy>(s::InputShapes::varying)};
  EXPECT_TRUE(contains(refusal(spec), "'chosen batch' and 'input shapes varying' both replace inputs"))
      << refusal(spec);
  // An input-shapes policy takes the inputs hook whatever its schedule (fixed feeds the default batch).
  spec.policies = {std::make_shared<ChosenBatch>(), std::make_shared<s::InputShapesPolicy>(s::InputShapes::fixed)};
  EXPECT_TRUE(contains(refusal(spec), "both replace inputs")) << refusal(spec);
}

// What a policy replaces is what it overrides, found at compile time: nothing to declare, so
// nothing to forget.
TEST(StepPolicy, APolicyReplacesExactlyTheHooksItOverrides) {
  const auto keep = KeepGradients().replaces();
  EXPECT_TRUE(keep.zero_grad);
  EXPECT_FALSE(keep.inputs || keep.micro_batches || keep.run_step);
  const auto chosen = ChosenBatch().replaces();
  EXPECT_TRUE(chosen.inputs);
  EXPECT_FALSE(chosen.zero_grad || chosen.micro_batches || chosen.run_step);
  const auto recorder = Recorder().replaces();  // after_step is not a replace-hook
  EXPECT_FALSE(recorder.inputs || recorder.zero_grad || recorder.micro_batches || recorder.run_step);
  static_assert(!std::is_constructible_v<s::StepPolicy>, "a policy derives from Policy<Self>");
}

// What a graph capture asks before capturing, as the cuda_graphs suite's policy does.
class CaptureProbe final : public s::Policy<CaptureProbe> {
 public:
  std::string name() const override { return "capture probe"; }
  void prepare(s::StepState& state) override {
    if (auto why = state.capture_unsafe_reason()) throw std::invalid_argument(*why);
  }
};

TEST(StepPolicy, WhatAGraphCannotCaptureIsAskedOfThePoliciesAndTheSpec) {
  auto base = small_spec();
  base.policies = {std::make_shared<CaptureProbe>()};
  EXPECT_EQ(refusal(base), "");  // SGD, fp32, fixed shapes
  auto varying = base;
  varying.policies.insert(varying.policies.begin(), std::make_shared<s::InputShapesPolicy>(s::InputShapes::varying));
  EXPECT_TRUE(contains(refusal(varying), "change its input shape")) << refusal(varying);
  auto fp16 = base;
  fp16.precision = s::Precision::fp16;
  EXPECT_TRUE(contains(refusal(fp16), "loss scaler")) << refusal(fp16);
  // AdamW's bias correction from a host step count would be frozen at its capture value.
  for (const auto impl : {s::OptimizerImpl::loop, s::OptimizerImpl::foreach}) {
    auto adamw = base;
    adamw.optimizer = {s::OptimizerKind::adamw, impl};
    EXPECT_TRUE(contains(refusal(adamw), "step count on the host")) << refusal(adamw);
  }
  auto fused_adamw = base;
  fused_adamw.optimizer = {s::OptimizerKind::adamw, s::OptimizerImpl::fused};
  EXPECT_EQ(refusal(fused_adamw), "") << "its step count lives on the device";
}

// The info of arms a CPU run skips (so the before/after comparison of a run cannot see it): the
// keys every training arm records, plus what the arm's policy adds.
std::vector<std::string> keys_of(const nlohmann::json& info) {
  std::vector<std::string> out;
  for (const auto& [key, value] : info.items()) out.push_back(key);
  return out;
}

TEST(StepPolicy, ArmsOfCudaSuitesRecordTheInfoTheyDidBeforePolicies) {
  const auto context = cpu_context(true);
  // Since schema 1.10 every training arm names its optimizer and PyTorch's default implementation.
  const std::vector<std::string> common{
      "batch_size", "channels_last",  "image_size", "input_shapes", "model",
      "optimizer",  "optimizer_impl", "parameters", "precision",    "pytorch_default_optimizer_impl"};
  auto with = [&](std::vector<std::string> keys, const std::string& extra) {
    keys.push_back(extra);
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  const auto& cudnn = tipbench::testing::suite_named("cudnn_benchmark");
  for (const auto& c : cudnn.cases(context)) {
    auto w = cudnn.prepare(context, c, c.arms[0], {});
    w->step();
    // The model FLOPs (MFU's numerator) only where every step has the counted shape.
    const bool fixed = tipbench::level(c.params, "shapes") == "fixed";
    EXPECT_EQ(keys_of(w->info()), fixed ? with(common, "training_flops_per_sample") : common);
    EXPECT_EQ(w->info().at("input_shapes"), tipbench::level(c.params, "shapes"));
  }
  const auto& creation = tipbench::testing::suite_named("device_creation");
  const auto c = creation.cases(context)[0];
  for (const auto& arm : c.arms) {
    auto w = creation.prepare(context, c, arm, {});
    EXPECT_EQ(keys_of(w->info()), with(with(common, "step_tensors"), "training_flops_per_sample"));
    EXPECT_EQ(w->info().at("step_tensors"), arm.name);
  }
  const auto& graphs = tipbench::testing::suite_named("cuda_graphs");
  const auto g = graphs.cases(context)[0];
  EXPECT_EQ(keys_of(graphs.prepare(context, g, g.arms[0], {})->info()),
            with(common, "training_flops_per_sample"));  // eager
}

}  // namespace
