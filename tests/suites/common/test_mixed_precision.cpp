// Mixed precision pieces of the amp and channels_last suites: the autocast scope enters and leaves
// like torch.autocast, the loss scaler behaves like PyTorch's GradScaler (skip and back off on an
// inf/NaN gradient, grow after clean steps, unscale exactly), bf16 training tracks fp32, and
// channels_last computes what NCHW computes.
#include "common/autocast.h"
#include "common/loss_scaler.h"
#include "tipbench/models/model.h"

#include "cuda_required.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

namespace {

namespace s = tipbench::suites;
using s::Precision;

TEST(AutocastScope, CastsInsideAndRestoresTheThreadsStateAfter) {
  ASSERT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  torch::nn::Linear fc(8, 4);
  const auto x = torch::randn({2, 8});
  {
    s::AutocastScope scope(c10::kCPU, Precision::bf16);
    EXPECT_TRUE(at::autocast::is_autocast_enabled(at::kCPU));
    EXPECT_EQ(fc(x).scalar_type(), torch::kBFloat16);
    {
      s::AutocastScope inner(c10::kCPU, Precision::fp32);  // fp32: changes nothing
      EXPECT_TRUE(at::autocast::is_autocast_enabled(at::kCPU));
    }
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  EXPECT_EQ(fc(x).scalar_type(), torch::kFloat);
}

TEST(Precision, NamesRoundTripAndUnknownNamesAreRefused) {
  for (Precision p : {Precision::fp32, Precision::bf16, Precision::fp16}) {
    EXPECT_EQ(s::parse_precision(s::precision_name(p)), p);
  }
  EXPECT_THROW(s::parse_precision("fp8"), std::invalid_argument);
  EXPECT_FALSE(s::precision_unsupported_reason(c10::Device(c10::kCPU), Precision::fp32));
  EXPECT_FALSE(s::precision_unsupported_reason(c10::Device(c10::kCPU), Precision::bf16));
}

// A linear classifier with an SGD optimizer and one batch, to drive the scaler.
struct Tiny {
  explicit Tiny(const c10::Device& device) {
    torch::manual_seed(3);
    fc = torch::nn::Linear(16, 4);
    fc->to(device);
    optimizer = std::make_unique<torch::optim::SGD>(fc->parameters(), torch::optim::SGDOptions(0.1));
    x = torch::randn({8, 16}).to(device);
    y = torch::randint(4, {8}, torch::kLong).to(device);
  }
  torch::Tensor loss() { return torch::nn::functional::cross_entropy(fc(x), y); }
  std::vector<torch::Tensor> weights() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : fc->parameters()) out.push_back(p.detach().clone());
    return out;
  }
  torch::nn::Linear fc{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer;
  torch::Tensor x, y;
};

TEST(LossScaler, UnscaledGradientsEqualTheUnscaledLossesGradients) {
  Tiny t{c10::Device(c10::kCPU)};
  t.loss().backward();
  std::vector<torch::Tensor> plain;
  for (const auto& p : t.fc->parameters()) plain.push_back(p.grad().clone());
  t.optimizer->zero_grad();
  s::LossScaler scaler{c10::Device(c10::kCPU)};
  scaler.scale(t.loss()).backward();
  scaler.unscale(*t.optimizer);
  // Scaling by 2^16 and back is exact in binary floating point (no overflow or subnormals here),
  // and every backward op is linear in the incoming gradient: the same bits come out.
  const auto params = t.fc->parameters();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i].grad(), plain[i])) << i;
}

void expect_a_bad_gradient_skips_and_backs_off(const c10::Device& device, double bad_value) {
  Tiny t(device);
  s::LossScaler scaler(device);
  const auto before = t.weights();
  scaler.scale(t.loss()).backward();
  t.fc->weight.grad()[0][0] = bad_value;
  EXPECT_FALSE(scaler.step(*t.optimizer));
  scaler.update();
  const auto after = t.weights();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i])) << i;
  EXPECT_EQ(scaler.current_scale(), 65536.0 * 0.5);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  // The next clean step steps.
  t.optimizer->zero_grad();
  scaler.scale(t.loss()).backward();
  EXPECT_TRUE(scaler.step(*t.optimizer));
  scaler.update();
  EXPECT_FALSE(torch::equal(before[0], t.weights()[0]));
}

TEST(LossScaler, AnInfGradientSkipsTheStepAndHalvesTheScale) {
  expect_a_bad_gradient_skips_and_backs_off(c10::Device(c10::kCPU), std::numeric_limits<double>::infinity());
}

TEST(LossScaler, ANanGradientSkipsTheStepToo) {
  expect_a_bad_gradient_skips_and_backs_off(c10::Device(c10::kCPU), std::numeric_limits<double>::quiet_NaN());
}

TEST(LossScaler_CUDA, AnInfGradientSkipsTheStepAndHalvesTheScale) {
  TIPBENCH_REQUIRE_CUDA();
  expect_a_bad_gradient_skips_and_backs_off(c10::Device(c10::kCUDA, 0), std::numeric_limits<double>::infinity());
}

TEST(LossScaler, GrowsAfterGrowthIntervalCleanSteps) {
  Tiny t{c10::Device(c10::kCPU)};
  s::LossScaler scaler(c10::Device(c10::kCPU), {.init_scale = 1024, .growth_interval = 3});
  for (int step = 1; step <= 4; ++step) {
    t.optimizer->zero_grad();
    scaler.scale(t.loss()).backward();
    EXPECT_TRUE(scaler.step(*t.optimizer));
    scaler.update();
    EXPECT_EQ(scaler.current_scale(), step < 3 ? 1024.0 : 2048.0) << "after step " << step;
  }
  EXPECT_EQ(scaler.skipped_steps(), 0);
}

// Final loss of `steps` SGD steps of small_cnn on one fixed batch, forward under `precision`.
double train_small_cnn(Precision precision, int steps) {
  torch::manual_seed(11);
  auto model = tipbench::models::make_model("small_cnn");
  auto module = model.ptr();
  module->train();
  torch::optim::SGD optimizer(module->parameters(), torch::optim::SGDOptions(0.02).momentum(0.9));
  const auto x = torch::randn({32, 3, 32, 32});
  const auto y = torch::randint(10, {32}, torch::kLong);
  torch::Tensor loss;
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    {
      s::AutocastScope scope(c10::kCPU, precision);
      loss = torch::nn::functional::cross_entropy(model.forward(x), y);
    }
    loss.backward();
    optimizer.step();
  }
  return loss.item<double>();
}

TEST(MixedPrecision, Bf16TrainingTracksFp32) {
  const double initial = train_small_cnn(Precision::fp32, 1);
  const double fp32 = train_small_cnn(Precision::fp32, 20);
  const double bf16 = train_small_cnn(Precision::bf16, 20);
  // Both learn the batch, and bf16 (8-bit mantissa: a relative rounding error of 2^-9 per op,
  // compounding over 20 steps of a chaotic trajectory) ends within 10% of fp32's loss; a broken
  // cast (weights never updated, a stale autocast cache) leaves the loss near its start instead.
  RecordProperty("loss_initial", std::to_string(initial));
  RecordProperty("loss_fp32", std::to_string(fp32));
  RecordProperty("loss_bf16", std::to_string(bf16));
  EXPECT_LT(fp32, 0.5 * initial);
  EXPECT_LT(bf16, 0.5 * initial);
  EXPECT_NEAR(bf16, fp32, 0.10 * fp32) << "fp32 " << fp32 << ", bf16 " << bf16;
}

// Outputs of the same model (same seed) in NCHW and in channels_last, in double: float's
// rounding differs between the two layouts' kernels; double leaves only a real difference.
void expect_channels_last_matches(const std::string& name, std::int64_t batch) {
  auto build = [&](bool channels_last) {
    torch::manual_seed(5);
    auto model = tipbench::models::make_model(name, {.channels_last = channels_last});
    model.ptr()->to(torch::kDouble);
    model.ptr()->train();
    return model;
  };
  auto nchw = build(false);
  auto nhwc = build(true);
  for (const auto& p : nhwc.ptr()->parameters()) {
    if (p.dim() == 4) EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast)) << name;
  }
  const auto size = tipbench::models::resolved_image_size(name, {});
  torch::manual_seed(6);
  const auto x = torch::randn({batch, 3, size, size}, torch::kDouble);
  const auto a = nchw.forward(x);
  const auto b = nhwc.forward(x.contiguous(at::MemoryFormat::ChannelsLast));
  const double scale = a.abs().max().item<double>();
  const double diff = (a - b).abs().max().item<double>();
  ::testing::Test::RecordProperty("max_relative_difference", ::testing::PrintToString(diff / scale));
  EXPECT_LE(diff, 1e-9 * scale) << name << ": max difference " << diff << " of " << scale;
}

TEST(ChannelsLast, SmallCnnComputesWhatNchwComputes) { expect_channels_last_matches("small_cnn", 4); }
TEST(ChannelsLast, ResNet18ComputesWhatNchwComputes) { expect_channels_last_matches("resnet18", 2); }

}  // namespace
