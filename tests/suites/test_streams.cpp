// The streams suite: its plan (a ViT of parallel blocks; every arm skipped off CUDA, with the
// reason), the parallel block's arithmetic (y = x + attn(ln(x)) + mlp(ln(x)) from the reference
// block's modules), and on a GPU that the branches on two side streams give the same loss and
// gradients as on one stream, bit for bit, and that both arms train through the harness.
#include "common/autocast.h"
#include "determinism/determinism.h"
#include "cuda_required.h"
#include "streams/parallel_vit.h"
#include "suite_plan.h"
#include "tipbench/models/model.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

namespace {

namespace s = tipbench::suites;
using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(StreamsSuite, ListsItsCasesAndSkipsEveryArmOffCudaWithTheReason) {
  const auto& suite = suite_named("streams");
  for (bool quick : {true, false}) {
    SCOPED_TRACE(quick ? "quick" : "full");
    const auto context = cpu_context(quick);
    const auto cases = suite.cases(context);
    ASSERT_EQ(cases.size(), 2u);  // fp32 and bf16; a CPU plan has no launch-bound batch-8 case
    EXPECT_EQ(tipbench::case_name("streams", cases[0]), "streams/model:vit_ti_16/batch:8/precision:fp32");
    EXPECT_EQ(tipbench::case_name("streams", cases[1]), "streams/model:vit_ti_16/batch:8/precision:bf16");
    for (const auto& c : cases) {
      EXPECT_EQ(arm_names(c), (std::vector<std::string>{"one_stream", "two_streams"}));
      for (const auto& arm : c.arms) {
        const auto why = suite.skip_reason(context, c, arm);
        ASSERT_TRUE(why) << arm.name;
        EXPECT_EQ(*why, "CUDA streams run kernels concurrently on a GPU; this run is on cpu");
      }
    }
  }
}

TEST(StreamsSuite, OnCudaTheDefaultBatchAndBatch8InBothPrecisionsAndViTsOnly) {
  const auto& suite = suite_named("streams");
  tipbench::SuiteContext context;
  context.device = c10::Device(c10::kCUDA);  // planning only: nothing runs
  auto cases = suite.cases(context);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(tipbench::case_name("streams", cases[0]), "streams/model:vit_b_16/batch:64/precision:fp32");
  EXPECT_EQ(tipbench::case_name("streams", cases[3]), "streams/model:vit_b_16/batch:8/precision:bf16");
  context.quick = true;
  cases = suite.cases(context);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(tipbench::case_name("streams", cases[0]), "streams/model:vit_ti_16/batch:256/precision:fp32");
  // A CNN has no parallel block: skipped with the reason on any device.
  context.models = {"resnet18"};
  cases = suite.cases(context);
  const auto why = suite.skip_reason(context, cases[0], cases[0].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "resnet18 is not a ViT")) << *why;
}

TEST(StreamsSuite, StatesTheSourceClaim) {
  const auto claim = suite_named("streams").source_claim();
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->sources, "001");
}

// ViT-Ti widths on 32 x 32 images (4 patches + the class token), 3 blocks, 10 classes: small
// enough for a CPU test, the same code as the suite's ViT-B/16.
tipbench::models::ViTOptions small_vit() {
  tipbench::models::ViTOptions o = tipbench::models::ViTOptions::ti16();
  o.image_size = 32;
  o.num_layers = 3;
  o.num_classes = 10;
  return o;
}

TEST(ParallelViT, ABlockAddsAttentionAndMlpOfOneLayerNormToItsInput) {
  torch::manual_seed(0);
  const auto o = small_vit();
  s::ParallelViT model(o);
  EXPECT_FALSE(model->on_branch_streams());
  ASSERT_EQ(model->blocks().size(), 3u);
  auto block = model->blocks()[0];
  const auto x = torch::randn({2, 5, o.hidden_dim});
  const auto h = block->ln(x);
  const auto expected = x + block->self_attention(h) + block->mlp->forward(h);
  EXPECT_TRUE(torch::equal(block->forward(x), expected));
  EXPECT_EQ(model->forward(torch::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 10}));
  // The reference ViT's parameters less one LayerNorm (weight and bias) per block.
  tipbench::models::VisionTransformer reference(o);
  EXPECT_EQ(tipbench::models::count_parameters(*model),
            tipbench::models::count_parameters(*reference) - o.num_layers * 2 * o.hidden_dim);
}

TEST(BranchStreams, OffCudaItRefusesWithTheReason) {
  try {
    s::BranchStreams streams(torch::kCPU);
    FAIL() << "made side streams on a CPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "CUDA streams run kernels concurrently on a GPU")) << e.what();
  }
}

// One forward and backward: the loss and every parameter's gradient, copied.
struct Pass {
  torch::Tensor loss;
  std::vector<torch::Tensor> grads;
};

Pass forward_backward(s::ParallelViT& model, const torch::Tensor& x, const torch::Tensor& y, s::Precision precision) {
  model->zero_grad(/*set_to_none=*/true);
  Pass out;
  {
    s::AutocastScope autocast(torch::kCUDA, precision);
    out.loss = torch::nn::functional::cross_entropy(model->forward(x), y);
  }
  out.loss.backward();  // on the current stream, which the forward's branches joined back into
  out.loss = out.loss.detach();
  for (const auto& p : model->parameters()) out.grads.push_back(p.grad().clone());
  return out;
}

// Deterministic algorithms for the scope's lifetime, then the knobs as they were (a failed
// assertion returns early: the binary's other tests still see the defaults).
class DeterministicScope {
 public:
  DeterministicScope() : before_(s::current_determinism()) { s::apply(s::Determinism::deterministic()); }
  ~DeterministicScope() { s::apply(before_); }
  DeterministicScope(const DeterministicScope&) = delete;
  DeterministicScope& operator=(const DeterministicScope&) = delete;

 private:
  s::Determinism before_;
};

// The two-stream arm enqueues the same kernels on the same operands as the one-stream arm, only
// on other streams; deterministic algorithms (cuDNN deterministic, SDPA's deterministic
// backward: strict mode, never warn-only) fix each kernel's order of summation, so the arithmetic
// is the same and so is every bit. The tolerance is therefore zero: a difference means a branch
// read its input before it was written, or the caller's stream read a result or a gradient before
// a side stream finished it (a missing wait), not rounding. Two passes with an SGD step between
// them: the second reuses the streams and events of the first.
TEST(StreamsSuite_CUDA, TwoStreamsGiveTheSameLossAndGradientsAsOneBitForBit) {
  TIPBENCH_REQUIRE_CUDA();
  DeterministicScope deterministic;
  for (s::Precision precision : {s::Precision::fp32, s::Precision::bf16}) {
    SCOPED_TRACE(s::precision_name(precision));
    torch::manual_seed(5);
    s::ParallelViT one(small_vit());
    s::ParallelViT two(small_vit(), std::make_shared<s::BranchStreams>(torch::kCUDA));
    ASSERT_TRUE(two->on_branch_streams());
    {
      torch::NoGradGuard no_grad;
      // The reference head starts at zero and would pass no gradient to the blocks: draw it.
      one->named_parameters()["vit.heads.head.weight"].normal_(0.0, 0.02);
      const auto a = one->parameters(), b = two->parameters();
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
    }
    one->to(torch::kCUDA);
    two->to(torch::kCUDA);
    const auto x = torch::randn({8, 3, 32, 32}, torch::kCUDA);
    const auto y = torch::randint(10, {8}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kLong));
    torch::optim::SGD sgd_one(one->parameters(), torch::optim::SGDOptions(0.1));
    torch::optim::SGD sgd_two(two->parameters(), torch::optim::SGDOptions(0.1));
    for (int pass = 0; pass < 2; ++pass) {
      SCOPED_TRACE("pass " + std::to_string(pass));
      const Pass a = forward_backward(one, x, y, precision);
      const Pass b = forward_backward(two, x, y, precision);
      EXPECT_TRUE(torch::equal(a.loss, b.loss)) << a.loss.item<double>() << " vs " << b.loss.item<double>();
      ASSERT_EQ(a.grads.size(), b.grads.size());
      double largest = 0;
      for (std::size_t i = 0; i < a.grads.size(); ++i) {
        EXPECT_TRUE(torch::equal(a.grads[i], b.grads[i]))
            << "parameter " << i << ": max |difference| " << (a.grads[i] - b.grads[i]).abs().max().item<double>();
        largest = std::max(largest, a.grads[i].abs().max().item<double>());
      }
      // The test can fail: the blocks' attention gets a gradient.
      EXPECT_GT(one->blocks()[0]->self_attention->in_proj_weight.grad().abs().max().item<double>(), 0.0);
      EXPECT_GT(largest, 0.0);
      sgd_one.step();
      sgd_two.step();
    }
  }
}

TEST(StreamsSuite_CUDA, BothArmsTrainThroughTheHarnessAndSayHowManyStreams) {
  TIPBENCH_REQUIRE_CUDA();
  const auto& suite = suite_named("streams");
  auto context = cpu_context(true);
  context.device = c10::Device(c10::kCUDA, 0);
  const auto cases = suite.cases(context);
  ASSERT_EQ(cases.size(), 4u);
  const auto& batch8 = cases[2];  // vit_ti_16, batch 8, fp32
  ASSERT_EQ(tipbench::case_name("streams", batch8), "streams/model:vit_ti_16/batch:8/precision:fp32");
  for (const auto& arm : batch8.arms) {
    SCOPED_TRACE(arm.name);
    EXPECT_FALSE(suite.skip_reason(context, batch8, arm));
    const auto t = tipbench::run_trial(suite, context, batch8, arm, tipbench::testing::short_trial(), 0, 0);
    EXPECT_EQ(t.info.at("branch_streams"), arm.name == "two_streams" ? 2 : 1);
    EXPECT_EQ(t.info.at("block"), "parallel");
    EXPECT_GT(t.trial.throughput_samples_per_s, 0);
  }
}

}  // namespace
