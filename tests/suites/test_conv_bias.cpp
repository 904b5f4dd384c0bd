// The conv_bias tip is sound for the models the suite runs: every convolution there feeds a
// BatchNorm, and BatchNorm in training mode subtracts the per-channel batch mean, which cancels
// any constant a conv bias adds. So a model with conv biases (conv_bias_before_bn = true) and
// the same model without them compute the same outputs and gradients; the biases only cost
// parameters. In eval mode (running statistics) the bias is not cancelled: that check shows the
// comparison would catch a model where it is not.
#include "tipbench/models/model.h"

#include "cuda_required.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <set>
#include <string>

namespace {

namespace models = tipbench::models;

struct Pair {
  torch::nn::AnyModule plain;  // conv_bias_before_bn = false (torchvision)
  torch::nn::AnyModule biased; // conv_bias_before_bn = true (nn.Conv2d's default)
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

struct Tolerance {
  double same;       // outputs/gradients that must agree
  double different;  // the least difference that counts as "differs"
};

Tolerance tolerance_for(torch::Dtype dtype) {
  return dtype == torch::kDouble ? Tolerance{1e-9, 1e-3} : Tolerance{2e-4, 1e-2};
}

// Training mode: same outputs, same gradients for the shared parameters, zero gradient for the
// conv biases (nothing downstream depends on them).
void expect_bias_cancelled_in_training(const std::string& name, int64_t image_size, torch::Device device,
                                       torch::Dtype dtype) {
  SCOPED_TRACE(name + " on " + device.str() + " in " + std::string(c10::toString(dtype)));
  Pair p = make_pair(name, image_size, device, dtype);
  const auto tol = tolerance_for(dtype);
  p.plain.ptr()->train();
  p.biased.ptr()->train();

  torch::manual_seed(1);
  const auto options = torch::TensorOptions().device(device).dtype(dtype);
  const auto x = torch::randn({8, 3, image_size, image_size}, options);
  const auto y_plain = p.plain.forward(x);
  const auto y_biased = p.biased.forward(x);
  ASSERT_EQ(y_plain.sizes(), (std::vector<int64_t>{8, 10}));
  EXPECT_LE(relative_difference(y_biased, y_plain), tol.same);

  // Backward through a random projection of the outputs, so every logit matters.
  const auto w = torch::randn({8, 10}, options);
  (y_plain * w).sum().backward();
  (y_biased * w).sum().backward();
  auto plain_params = p.plain.ptr()->named_parameters();
  for (const auto& item : p.biased.ptr()->named_parameters()) {
    const auto& grad = item.value().grad();
    ASSERT_TRUE(grad.defined()) << item.key();
    if (p.conv_biases.count(item.key())) {
      EXPECT_LE(grad.abs().max().item<double>(), tol.same * std::max(1.0, y_plain.abs().max().item<double>()))
          << "conv bias " << item.key() << " has a gradient: BN did not cancel it";
      continue;
    }
    const auto& want = plain_params.find(item.key())->grad();
    ASSERT_TRUE(want.defined()) << item.key();
    EXPECT_LE(relative_difference(grad, want), 10 * tol.same) << item.key();
  }
}

// Eval mode: BatchNorm uses its running statistics, which do not cancel the bias.
void expect_bias_visible_in_eval(const std::string& name, int64_t image_size, torch::Device device,
                                 torch::Dtype dtype) {
  SCOPED_TRACE(name + " on " + device.str() + " in " + std::string(c10::toString(dtype)));
  Pair p = make_pair(name, image_size, device, dtype);
  p.plain.ptr()->eval();
  p.biased.ptr()->eval();
  torch::NoGradGuard no_grad;
  torch::manual_seed(1);
  const auto x = torch::randn({8, 3, image_size, image_size}, torch::TensorOptions().device(device).dtype(dtype));
  EXPECT_GT(relative_difference(p.biased.forward(x), p.plain.forward(x)), tolerance_for(dtype).different);
}

void expect_parameter_difference(const std::string& name, int64_t image_size) {
  SCOPED_TRACE(name);
  Pair p = make_pair(name, image_size, torch::kCPU, torch::kFloat);
  EXPECT_GT(p.conv_bias_elements, 0);
  EXPECT_EQ(models::count_parameters(*p.biased.ptr()) - models::count_parameters(*p.plain.ptr()),
            p.conv_bias_elements);
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
  expect_bias_cancelled_in_training("small_cnn", 64, torch::kCPU, torch::kDouble);
  expect_bias_cancelled_in_training("small_cnn", 64, torch::kCPU, torch::kFloat);
}

TEST(ConvBias, BatchNormCancelsTheBiasInTrainingResNet18) {
  expect_bias_cancelled_in_training("resnet18", 64, torch::kCPU, torch::kDouble);
  expect_bias_cancelled_in_training("resnet18", 64, torch::kCPU, torch::kFloat);
}

TEST(ConvBias, BiasChangesTheOutputInEvalMode) {
  expect_bias_visible_in_eval("small_cnn", 64, torch::kCPU, torch::kDouble);
  expect_bias_visible_in_eval("resnet18", 64, torch::kCPU, torch::kDouble);
}

TEST(ConvBias_CUDA, BatchNormCancelsTheBiasInTraining) {
  TIPBENCH_REQUIRE_CUDA();
  for (const std::string model : {"small_cnn", "resnet18"}) {
    expect_bias_cancelled_in_training(model, 64, torch::kCUDA, torch::kDouble);
    expect_bias_cancelled_in_training(model, 64, torch::kCUDA, torch::kFloat);
  }
}

TEST(ConvBias_CUDA, BiasChangesTheOutputInEvalMode) {
  TIPBENCH_REQUIRE_CUDA();
  for (const std::string model : {"small_cnn", "resnet18"}) {
    expect_bias_visible_in_eval(model, 64, torch::kCUDA, torch::kDouble);
  }
}

}  // namespace
