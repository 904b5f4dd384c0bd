// The conv_bias tip is sound for the models the suite runs: every convolution there feeds a
// BatchNorm, and BatchNorm in training mode subtracts the per-channel batch mean, which cancels
// any constant a conv bias adds. So a model with conv biases (conv_bias_before_bn = true) and
// the same model without them compute the same outputs and gradients; the biases only cost
// parameters. In eval mode (running statistics) the bias is not cancelled: that check shows the
// comparison would catch a model where it is not.
//
// The equivalence is an identity of exact arithmetic, so it is checked in double. In float it
// cannot be checked with a tolerance that holds on every CPU: the biased net adds a bias of
// magnitude ~1 to conv outputs and BatchNorm subtracts it again, a cancellation that amplifies
// float's rounding (unit roundoff 2^-24 = 6e-8) by a factor that depends on the kernels (CPU
// capability, cuDNN, TF32) and the order they sum in. Measured float gradient differences, as a
// share of their scale: small_cnn 1.6e-6 with ATEN_CPU_CAPABILITY=default but 1.0e-2 with avx2;
// resnet18 2.1e-2 (default) and 9.9e-3 (avx2). Double's rounding is 2^29 times smaller: the same
// comparison measures at most 3.3e-13 under either capability (printed by each run). A bias that
// were not cancelled differs by O(1): the eval-mode check measures 0.9 and 1.7. kSame = 1e-6 sits
// between the two scales, more than four orders of magnitude from each, so it holds for kernels
// whose rounding is a million times worse than today's and fails on any real difference.

#include "tipbench/models/model.h"

#include "cuda_required.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

namespace {

namespace models = tipbench::models;

struct Pair {
  torch::nn::AnyModule plain;         // conv_bias_before_bn = false (torchvision)
  torch::nn::AnyModule biased;        // conv_bias_before_bn = true (nn.Conv2d's default)
  std::set<std::string> conv_biases;  // names of the biased model's conv bias parameters
  int64_t conv_bias_elements = 0;
};

// Both variants of `name`, with every parameter and buffer they share copied by name from the
// plain model into the biased one, and every conv bias set to random non-zero values.
Pair make_pair(const std::string& name, int64_t image_size, torch::Device device, torch::Dtype dtype) {
  Pair p;
  models::ModelOptions options{.num_classes = 10, .image_size = image_size};
  torch::manual_seed(0);
  p.plain = models::make_model(name, options);
  options.conv_bias_before_bn = true;
  torch::manual_seed(0);
  p.biased = models::make_model(name, options);

  auto& plain = *p.plain.ptr();
  auto& biased = *p.biased.ptr();

  // Every conv of the plain model has no bias; every conv of the biased one has one.
  int convs = 0;
  for (const auto& item : plain.named_modules()) {
    if (auto* conv = item.value()->as<torch::nn::Conv2d>()) {
      ++convs;
      EXPECT_FALSE(conv->bias.defined()) << name << ": " << item.key();
    }
  }
  EXPECT_GT(convs, 0) << name;
  for (const auto& item : biased.named_modules()) {
    if (auto* conv = item.value()->as<torch::nn::Conv2d>()) {
      EXPECT_TRUE(conv->bias.defined()) << name << ": " << item.key();
      if (conv->bias.defined()) {
        p.conv_biases.insert(item.key() + ".bias");
        p.conv_bias_elements += conv->bias.numel();
      }
    }
  }
  EXPECT_EQ(static_cast<int>(p.conv_biases.size()), convs) << name;

  torch::NoGradGuard no_grad;
  auto biased_params = biased.named_parameters();
  std::set<std::string> copied;
  for (const auto& item : plain.named_parameters()) {
    auto* target = biased_params.find(item.key());
    EXPECT_NE(target, nullptr) << name << ": " << item.key() << " missing in the biased model";
    if (target == nullptr) continue;
    target->copy_(item.value());
    copied.insert(item.key());
  }
  // The biased model has exactly the conv biases on top of the plain model's parameters.
  std::set<std::string> extra;
  for (const auto& item : biased_params) {
    if (!copied.count(item.key())) extra.insert(item.key());
  }
  EXPECT_EQ(extra, p.conv_biases) << name;

  auto biased_buffers = biased.named_buffers();
  for (const auto& item : plain.named_buffers()) {
    auto* target = biased_buffers.find(item.key());
    EXPECT_NE(target, nullptr) << name << ": buffer " << item.key();
    if (target != nullptr) target->copy_(item.value());
  }
  EXPECT_EQ(biased_buffers.size(), plain.named_buffers().size()) << name;

  for (const auto& key : p.conv_biases) {
    // Uniform in [0.5, 1.5] with a random sign: clearly non-zero, large next to the activations.
    auto& bias = *biased_params.find(key);
    auto magnitude = torch::rand(bias.sizes()) + 0.5;
    auto sign = torch::randint(0, 2, bias.sizes()).to(torch::kFloat) * 2 - 1;
    bias.copy_(magnitude * sign);
  }

  plain.to(device, dtype);
  biased.to(device, dtype);
  return p;
}

// max |got - want| relative to want's magnitude (at least 1).
double relative_difference(const torch::Tensor& got, const torch::Tensor& want) {
  const double scale = std::max(1.0, want.abs().max().item<double>());
  return (got - want).abs().max().item<double>() / scale;
}

// Relative differences (see the top of the file): rounding in double stays far below kSame, a
// bias that is not cancelled far exceeds kDifferent.
constexpr double kSame = 1e-6;
constexpr double kDifferent = 1e-2;

// Training mode, in double: same outputs, same gradients for the shared parameters, zero
// gradient for the conv biases (nothing downstream depends on them).
void expect_bias_cancelled_in_training(const std::string& name, int64_t image_size, torch::Device device) {
  SCOPED_TRACE(name + " on " + device.str());
  Pair p = make_pair(name, image_size, device, torch::kDouble);
  p.plain.ptr()->train();
  p.biased.ptr()->train();

  torch::manual_seed(1);
  const auto options = torch::TensorOptions().device(device).dtype(torch::kDouble);
  const auto x = torch::randn({8, 3, image_size, image_size}, options);
  const auto y_plain = p.plain.forward(x);
  const auto y_biased = p.biased.forward(x);
  ASSERT_EQ(y_plain.sizes(), (std::vector<int64_t>{8, 10}));
  const double output_difference = relative_difference(y_biased, y_plain);
  EXPECT_LE(output_difference, kSame);

  // Backward through a random projection of the outputs, so every logit matters.
  const auto w = torch::randn({8, 10}, options);
  (y_plain * w).sum().backward();
  (y_biased * w).sum().backward();
  auto plain_params = p.plain.ptr()->named_parameters();
  const double gradient_scale = std::max(1.0, y_plain.abs().max().item<double>());
  double worst_gradient = 0, worst_bias_gradient = 0;
  for (const auto& item : p.biased.ptr()->named_parameters()) {
    const auto& grad = item.value().grad();
    ASSERT_TRUE(grad.defined()) << item.key();
    if (p.conv_biases.count(item.key())) {
      const double bias_gradient = grad.abs().max().item<double>() / gradient_scale;
      worst_bias_gradient = std::max(worst_bias_gradient, bias_gradient);
      EXPECT_LE(bias_gradient, kSame) << "conv bias " << item.key() << " has a gradient: BN did not cancel it";
      continue;
    }
    const auto& want = plain_params.find(item.key())->grad();
    ASSERT_TRUE(want.defined()) << item.key();
    const double difference = relative_difference(grad, want);
    worst_gradient = std::max(worst_gradient, difference);
    EXPECT_LE(difference, kSame) << item.key();
  }
  // The margins, for the log: how far below kSame rounding stays on this CPU and kernels.
  std::printf(
      "%s on %s, double: outputs differ by %.3g, gradients by %.3g, conv-bias gradients %.3g "
      "(relative; allowed %.0e)\n",
      name.c_str(), device.str().c_str(), output_difference, worst_gradient, worst_bias_gradient, kSame);
}

// Eval mode: BatchNorm uses its running statistics, which do not cancel the bias.
void expect_bias_visible_in_eval(const std::string& name, int64_t image_size, torch::Device device) {
  SCOPED_TRACE(name + " on " + device.str());
  Pair p = make_pair(name, image_size, device, torch::kDouble);
  p.plain.ptr()->eval();
  p.biased.ptr()->eval();
  torch::NoGradGuard no_grad;
  torch::manual_seed(1);
  const auto x =
      torch::randn({8, 3, image_size, image_size}, torch::TensorOptions().device(device).dtype(torch::kDouble));
  const double difference = relative_difference(p.biased.forward(x), p.plain.forward(x));
  EXPECT_GT(difference, kDifferent);
  std::printf("%s on %s, eval mode: outputs differ by %.3g (relative; at least %.0e expected)\n", name.c_str(),
              device.str().c_str(), difference, kDifferent);
}

void expect_parameter_difference(const std::string& name, int64_t image_size) {
  SCOPED_TRACE(name);
  Pair p = make_pair(name, image_size, torch::kCPU, torch::kFloat);
  EXPECT_GT(p.conv_bias_elements, 0);
  EXPECT_EQ(models::count_parameters(*p.biased.ptr()) - models::count_parameters(*p.plain.ptr()), p.conv_bias_elements);
}

// ---------------------------------------------------------------------------------------------

TEST(ConvBias, ParameterCountDiffersByTheConvBiases) {
  expect_parameter_difference("small_cnn", 64);
  expect_parameter_difference("resnet18", 64);
  // small_cnn: one bias per output channel of its four stages.
  Pair p = make_pair("small_cnn", 64, torch::kCPU, torch::kFloat);
  EXPECT_EQ(p.conv_bias_elements, 32 + 64 + 128 + 256);
  // resnet18: stem 64, layer1 4x64, layer2 4x128 + 128, layer3 4x256 + 256, layer4 4x512 + 512.
  Pair r = make_pair("resnet18", 64, torch::kCPU, torch::kFloat);
  EXPECT_EQ(r.conv_bias_elements, 64 + 4 * 64 + 5 * 128 + 5 * 256 + 5 * 512);
}

TEST(ConvBias, BatchNormCancelsTheBiasInTrainingSmallCnn) {
  expect_bias_cancelled_in_training("small_cnn", 64, torch::kCPU);
}

TEST(ConvBias, BatchNormCancelsTheBiasInTrainingResNet18) {
  expect_bias_cancelled_in_training("resnet18", 64, torch::kCPU);
}

TEST(ConvBias, BiasChangesTheOutputInEvalMode) {
  expect_bias_visible_in_eval("small_cnn", 64, torch::kCPU);
  expect_bias_visible_in_eval("resnet18", 64, torch::kCPU);
}

TEST(ConvBias_CUDA, BatchNormCancelsTheBiasInTraining) {
  TIPBENCH_REQUIRE_CUDA();
  for (const std::string model : {"small_cnn", "resnet18"}) expect_bias_cancelled_in_training(model, 64, torch::kCUDA);
}

TEST(ConvBias_CUDA, BiasChangesTheOutputInEvalMode) {
  TIPBENCH_REQUIRE_CUDA();
  for (const std::string model : {"small_cnn", "resnet18"}) expect_bias_visible_in_eval(model, 64, torch::kCUDA);
}

}  // namespace
