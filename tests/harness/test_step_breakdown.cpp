// `run --explain` on a real LibTorch training step (a small MLP, its phases marked as
// training.cpp marks them): an op slowed on purpose (the --inject-slowdown-op knob) is named first
// with the share it explains, and an arm that keeps an extra activation shows it as the top
// contributor to the memory peak's difference. The breakdown is of extra steps after the timed
// ones: the trial's timed steps are the same with and without it.
#include "tipbench/explain.h"
#include "tipbench/trial.h"

#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>

namespace {

// A two-layer MLP's training step. Arm "keeps_extra" holds an extra copy of the hidden
// activation (aten::mul) until the step ends, as a model that saves one more tensor would.
class MlpWorkload final : public tipbench::Workload {
 public:
  explicit MlpWorkload(bool keeps_extra) : keeps_extra_(keeps_extra) {
    // A few milliseconds a step: long enough that a preempted microsecond is not the signal.
    fc1_ = register_module(torch::nn::Linear(512, 1024));
    fc2_ = register_module(torch::nn::Linear(1024, 10));
    x_ = torch::randn({128, 512});
    y_ = torch::randint(0, 10, {128});
    optimizer_ = std::make_unique<torch::optim::SGD>(params_, torch::optim::SGDOptions(0.01));
  }
  void step() override {
    {
      RECORD_USER_SCOPE("tipbench::zero_grad");
      optimizer_->zero_grad();
    }
    torch::Tensor loss, extra;
    {
      RECORD_USER_SCOPE("tipbench::forward");
      auto h = torch::relu(fc1_->forward(x_));
      if (keeps_extra_) extra = h.mul(2.0);  // 128 x 1024 floats, live through the backward
      loss = torch::nn::functional::cross_entropy(fc2_->forward(h), y_);
    }
    {
      RECORD_USER_SCOPE("tipbench::backward");
      loss.backward();
    }
    {
      RECORD_USER_SCOPE("tipbench::optimizer");
      optimizer_->step();
    }
  }
  std::int64_t samples_per_step() const override { return 128; }

 private:
  template <typename M>
  M register_module(M m) {
    for (auto& p : m->parameters()) params_.push_back(p);
    return m;
  }
  bool keeps_extra_;
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  std::vector<torch::Tensor> params_;
  torch::Tensor x_, y_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
};

class MlpSuite final : public tipbench::Suite {
 public:
  std::string name() const override { return "mlp_test"; }
  std::string description() const override { return "test MLP"; }
  std::vector<tipbench::CaseSpec> cases(const tipbench::SuiteContext&) const override {
    return {{{{"model", "mlp"}}, {{"plain", {}}, {"keeps_extra", {}}}}};
  }
  std::unique_ptr<tipbench::Workload> prepare(const tipbench::SuiteContext&, const tipbench::CaseSpec&,
                                              const tipbench::ArmSpec& arm, const tipbench::TrialInfo&) const override {
    return std::make_unique<MlpWorkload>(arm.name == "keeps_extra");
  }
};

tipbench::MeasureSettings explained_settings() {
  tipbench::MeasureSettings s;
  s.warmup_min_steps = 3;
  s.warmup_window = 2;
  s.trial_min_steps = 10;
  s.trial_min_time_s = 0.02;
  s.explain_steps = 3;
  return s;
}

// Block by block, the arm `arm` with `base` settings and again with `head` settings: the two sides
// of an interleaved session.
std::pair<tipbench::ArmResult, tipbench::ArmResult> interleaved(const tipbench::MeasureSettings& base,
                                                                const tipbench::MeasureSettings& head, int arm_a,
                                                                int arm_b, int blocks) {
  // One intra-op thread: beside another test on a 2-core machine, two threads waiting on each
  // other at every barrier make a step 10 times slower and its noise as large (docs/gate.md).
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  const MlpSuite suite;
  const tipbench::SuiteContext context;
  const auto c = suite.cases(context).front();
  tipbench::ArmResult a, b;
  for (int block = 0; block < blocks; ++block) {
    b.trials.push_back(tipbench::run_trial(suite, context, c, c.arms[arm_b], base, block, 0).trial);
    a.trials.push_back(tipbench::run_trial(suite, context, c, c.arms[arm_a], head, block, 1).trial);
  }
  torch::set_num_threads(threads);
  return {a, b};
}

TEST(StepBreakdown, AnOpSlowedOnPurposeIsNamedFirstWithTheShareItExplains) {
  auto base = explained_settings();
  base.inject_slowdown_op = "aten::addmm";  // the knob's callback on both sides, the delay on one
  auto head = base;
  head.inject_slowdown_pct = 30;
  const auto [slowed, plain] = interleaved(base, head, 0, 0, 8);
  ASSERT_TRUE(slowed.trials[0].breakdown);
  EXPECT_EQ(slowed.trials[0].breakdown->error, "");
  EXPECT_EQ(slowed.trials[0].breakdown->steps, 3);
  const auto e = tipbench::explain_arms(slowed, plain);
  const auto lines = tipbench::explanation_lines(e);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  ASSERT_FALSE(e.causes.empty()) << all;
  EXPECT_EQ(e.causes[0].op, "aten::addmm") << all;
  EXPECT_EQ(e.causes[0].phase, "forward") << all;
  EXPECT_TRUE(e.causes[0].ms_per_step.resolved()) << all;
  EXPECT_FALSE(e.unexplained) << all;
  EXPECT_GE(e.explained_share, tipbench::kExplainedShareFloor) << all;
}

TEST(StepBreakdown, AnExtraActivationIsTheTopContributorToThePeaksDifference) {
  const auto settings = explained_settings();
  const auto [extra, plain] = interleaved(settings, settings, 1, 0, 3);
  const auto e = tipbench::explain_arms(extra, plain);
  std::string all;
  for (const auto& l : tipbench::explanation_lines(e)) all += l + "\n";
  ASSERT_EQ(e.memory_device, "cpu") << all;
  ASSERT_FALSE(e.memory.empty()) << all;
  EXPECT_EQ(e.memory[0].phase, "forward") << all;
  EXPECT_EQ(e.memory[0].op, "aten::mul") << all;
  EXPECT_DOUBLE_EQ(e.memory[0].delta_bytes, 128.0 * 1024 * 4) << all;
  EXPECT_GT(e.treatment_peak_bytes, e.baseline_peak_bytes) << all;
}

}  // namespace
