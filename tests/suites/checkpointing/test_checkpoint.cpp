// Activation checkpointing must not change what training computes: with the same seed, the loss,
// every parameter gradient and the RNG state after backward equal those without checkpointing
// (ResNet; ViT with dropout, so the recompute must replay the same masks; autocast, so it must
// recompute in the forward's precision). Parameters inside a segment get gradients even when the
// segment's input does not require grad. And the point of it: fewer bytes held for backward.
#include "checkpointing/checkpoint.h"
#include "common/device_memory.h"
#include "checkpointing/segments.h"
#include "tipbench/models/model.h"

#include "cuda_required.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>

namespace {

namespace models = tipbench::models;
namespace s = tipbench::suites;
namespace F = torch::nn::functional;

struct StepResult {
  double loss = 0;
  std::map<std::string, torch::Tensor> grads;
  torch::Tensor rng_after;  // a draw after backward: the RNG must end where it would without checkpointing
};

StepResult train_step(s::SegmentedModel& net, const torch::Tensor& images, const torch::Tensor& labels,
                      std::uint64_t seed) {
  net.module().zero_grad();
  torch::manual_seed(seed);
  auto loss = F::cross_entropy(net.forward(images), labels);
  loss.backward();
  StepResult r;
  r.loss = loss.item<double>();
  for (const auto& p : net.module().named_parameters()) {
    r.grads[p.key()] = p.value().grad().defined() ? p.value().grad().detach().clone() : torch::Tensor();
  }
  r.rng_after = torch::rand({8}, torch::TensorOptions().device(images.device()));
  return r;
}

// Every gradient defined in both and equal to tolerance; returns the largest difference seen.
double expect_same_gradients(const StepResult& expected, const StepResult& actual, double rtol = 1e-5,
                             double atol = 1e-6) {
  EXPECT_EQ(expected.grads.size(), actual.grads.size());
  double worst = 0;
  for (const auto& [name, g] : expected.grads) {
    const auto& other = actual.grads.at(name);
    EXPECT_TRUE(g.defined()) << name << " has no gradient without checkpointing";
    EXPECT_TRUE(other.defined()) << name << " has no gradient with checkpointing";
    if (!g.defined() || !other.defined()) continue;
    worst = std::max(worst, (g - other).abs().max().item<double>());
    EXPECT_TRUE(torch::allclose(g, other, rtol, atol))
        << name << ": max |diff| " << (g - other).abs().max().item<double>();
  }
  return worst;
}

double max_gradient_difference(const StepResult& a, const StepResult& b) {
  double worst = 0;
  for (const auto& [name, g] : a.grads) {
    if (g.defined() && b.grads.at(name).defined())
      worst = std::max(worst, (g - b.grads.at(name)).abs().max().item<double>());
  }
  return worst;
}

struct Setup {
  torch::nn::AnyModule model;
  torch::Tensor images, labels;
};

Setup make_setup(const std::string& name, const models::ModelOptions& options, std::int64_t batch,
                 torch::Device device = torch::kCPU) {
  torch::manual_seed(0);
  Setup st{models::make_model(name, options), {}, {}};
  st.model.ptr()->to(device);
  st.model.ptr()->train();
  const auto size = models::resolved_image_size(name, options);
  st.images = torch::randn({batch, 3, size, size}, torch::TensorOptions().device(device));
  st.labels = torch::randint(options.num_classes, {batch}, torch::TensorOptions().device(device).dtype(torch::kLong));
  return st;
}

void expect_policies_match(const Setup& st, std::uint64_t seed) {
  s::SegmentedModel reference(st.model, s::CheckpointPolicy::parse("off"));
  const StepResult expected = train_step(reference, st.images, st.labels, seed);
  for (const char* policy : {"per_stage", "every_2"}) {
    SCOPED_TRACE(policy);
    s::SegmentedModel net(st.model, s::CheckpointPolicy::parse(policy));
    ASSERT_FALSE(net.units_per_segment().empty());
    const StepResult actual = train_step(net, st.images, st.labels, seed);
    EXPECT_DOUBLE_EQ(expected.loss, actual.loss);
    expect_same_gradients(expected, actual);
    EXPECT_TRUE(torch::equal(expected.rng_after, actual.rng_after)) << "the RNG was not put back after the recompute";
  }
}

TEST(CheckpointPolicy, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(s::CheckpointPolicy::parse("off").kind, s::CheckpointPolicy::Kind::off);
  EXPECT_EQ(s::CheckpointPolicy::parse("per_stage").name(), "per_stage");
  const auto every = s::CheckpointPolicy::parse("every_3");
  EXPECT_EQ(every.kind, s::CheckpointPolicy::Kind::every_k);
  EXPECT_EQ(every.k, 3);
  EXPECT_EQ(every.name(), "every_3");
  for (const char* bad : {"every_0", "every_", "every_2x", "stage", ""}) {
    EXPECT_THROW(s::CheckpointPolicy::parse(bad), std::invalid_argument) << bad;
  }
}

TEST(SegmentedModel, CutsSegmentsByStageOrEveryKUnits) {
  auto resnet = models::make_model("resnet50");
  EXPECT_EQ(s::SegmentedModel(resnet, s::CheckpointPolicy::parse("per_stage")).units_per_segment(),
            (std::vector<int>{3, 4, 6, 3}));
  EXPECT_EQ(s::SegmentedModel(resnet, s::CheckpointPolicy::parse("every_4")).units_per_segment(),
            (std::vector<int>{4, 4, 4, 4}));
  EXPECT_TRUE(s::SegmentedModel(resnet, s::CheckpointPolicy::parse("off")).units_per_segment().empty());
  auto vit = models::make_model("vit_ti_16", {.image_size = 32});
  EXPECT_EQ(s::SegmentedModel(vit, s::CheckpointPolicy::parse("per_stage")).units_per_segment(),
            std::vector<int>(12, 1));
  EXPECT_EQ(s::SegmentedModel(vit, s::CheckpointPolicy::parse("every_5")).units_per_segment(),
            (std::vector<int>{5, 5, 2}));
}

TEST(CheckpointGradients, ResNetMatchesWithoutCheckpointing) {
  const auto st = make_setup("resnet18", {.num_classes = 10, .image_size = 32}, /*batch=*/4);
  expect_policies_match(st, /*seed=*/7);
}

TEST(CheckpointGradients, ViTWithDropoutMatchesWithoutCheckpointing) {
  const auto st =
      make_setup("vit_ti_16", {.num_classes = 10, .image_size = 32, .dropout = 0.1, .attention_dropout = 0.1},
                 /*batch=*/4);
  expect_policies_match(st, /*seed=*/7);
}

// The equality above is not vacuous: another dropout mask (another seed) changes the gradients
// by far more than the tolerance, so a recompute that drew fresh masks would fail it.
TEST(CheckpointGradients, DropoutMasksMatterAtThisTolerance) {
  const auto st =
      make_setup("vit_ti_16", {.num_classes = 10, .image_size = 32, .dropout = 0.1, .attention_dropout = 0.1},
                 /*batch=*/4);
  s::SegmentedModel net(st.model, s::CheckpointPolicy::parse("per_stage"));
  const auto a = train_step(net, st.images, st.labels, 7);
  const auto b = train_step(net, st.images, st.labels, 8);
  EXPECT_GT(max_gradient_difference(a, b), 1e-3);
}

// Autocast is per thread and usually off when backward runs: the recompute must re-apply the
// forward's (CPU, bfloat16) or its activations, and so the gradients, would be float32 ones.
TEST(CheckpointGradients, RecomputeRunsUnderTheForwardsAutocast) {
  const auto st = make_setup("small_cnn", {.num_classes = 10}, /*batch=*/8);
  auto step = [&](s::SegmentedModel& net, bool autocast) {
    net.module().zero_grad();
    torch::Tensor loss;
    {
      at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
      at::autocast::set_autocast_enabled(at::kCPU, autocast);
      at::autocast::increment_nesting();
      loss = F::cross_entropy(net.forward(st.images), st.labels);
      if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
      at::autocast::set_autocast_enabled(at::kCPU, false);
    }
    loss.backward();
    StepResult r;
    for (const auto& p : net.module().named_parameters()) r.grads[p.key()] = p.value().grad().detach().clone();
    return r;
  };
  s::SegmentedModel reference(st.model, s::CheckpointPolicy::parse("off"));
  s::SegmentedModel checkpointed(st.model, s::CheckpointPolicy::parse("per_stage"));
  const auto expected = step(reference, true);
  expect_same_gradients(expected, step(checkpointed, true));
  EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU)) << "the recompute left autocast on";
  // Sensitivity: float32 gradients differ from the bfloat16 ones by far more than the tolerance.
  EXPECT_GT(max_gradient_difference(expected, step(reference, false)), 1e-3);
}

TEST(CheckpointParameters, GetGradientsWhenTheInputDoesNotRequireGrad) {
  // SmallCNN has no stem: its first checkpointed segment is fed the raw images.
  const auto st = make_setup("small_cnn", {.num_classes = 10}, /*batch=*/8);
  ASSERT_FALSE(st.images.requires_grad());
  s::SegmentedModel reference(st.model, s::CheckpointPolicy::parse("off"));
  s::SegmentedModel net(st.model, s::CheckpointPolicy::parse("per_stage"));
  const auto expected = train_step(reference, st.images, st.labels, 3);
  const auto actual = train_step(net, st.images, st.labels, 3);
  EXPECT_TRUE(actual.grads.at("features.0.conv.weight").defined());
  expect_same_gradients(expected, actual);
}

TEST(CheckpointParameters, ParametersAreTheNodesInputs) {
  auto w = torch::randn({4, 3}, torch::requires_grad());
  const auto x = torch::randn({2, 3});  // no grad, like raw images
  auto fn = [&](const torch::Tensor& in) { return torch::relu(F::linear(in, w)); };
  auto y = s::checkpoint(fn, x, {w});
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  const auto expected = torch::autograd::grad({fn(x).sum()}, {w})[0];
  EXPECT_TRUE(torch::allclose(w.grad(), expected));
  // The trap the parameter inputs avoid: with only x as input, autograd builds no node at all.
  EXPECT_FALSE(s::checkpoint(fn, x, {}).requires_grad());
}

TEST(CheckpointMemory, HoldsFewerBytesForBackward) {
  const auto st = make_setup("resnet18", {.num_classes = 10, .image_size = 64}, /*batch=*/8);
  auto held = [&](const char* policy) {
    s::SegmentedModel net(st.model, s::CheckpointPolicy::parse(policy));
    net.module().zero_grad();
    const auto before = s::bytes_in_use(torch::kCPU);
    auto loss = F::cross_entropy(net.forward(st.images), st.labels);
    const auto bytes = s::bytes_in_use(torch::kCPU) - before;
    loss.backward();
    return bytes;
  };
  const auto off = held("off");
  const auto per_stage = held("per_stage");
  RecordProperty("held_off_bytes", std::to_string(off));
  RecordProperty("held_per_stage_bytes", std::to_string(per_stage));
  EXPECT_GT(off, 0);
  EXPECT_LT(per_stage, off * 6 / 10) << "off " << off << " B, per_stage " << per_stage << " B";
}

TEST(CheckpointGradients, ViTWithDropoutMatchesOnGpu_CUDA) {
  TIPBENCH_REQUIRE_CUDA();
  const auto st =
      make_setup("vit_ti_16", {.num_classes = 10, .image_size = 32, .dropout = 0.1, .attention_dropout = 0.1},
                 /*batch=*/4, torch::kCUDA);
  expect_policies_match(st, /*seed=*/7);
}

}  // namespace
