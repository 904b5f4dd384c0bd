// The CUDA-graph step of the cuda_graphs suite: a captured training step, replayed, leaves the
// same parameters as the same steps run eagerly (ReplayMatchesEager_CUDA: SGD-momentum, and the
// fused AdamW whose step count lives on the device, over 8 steps); off CUDA it refuses with the
// reason instead of capturing nothing.
#include "cuda_graphs/captured_step.h"
#include "common/optimizers.h"
#include "tipbench/models/model.h"

#include "cuda_required.h"

#include <ATen/Context.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

namespace s = tipbench::suites;

TEST(CapturedStep, OffCudaItRefusesWithTheReason) {
  const auto why = s::cuda_graph_unavailable(torch::kCPU);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("CUDA kernels"), std::string::npos) << *why;
  EXPECT_THROW(s::CapturedStep(torch::kCPU, [] {}), std::invalid_argument);
}

// A small CNN with SGD-momentum (or another optimizer), trained on one static batch.
struct Trainer {
  torch::nn::AnyModule model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  torch::Tensor x, y;

  explicit Trainer(s::OptimizerChoice choice = {}) {
    torch::manual_seed(3);
    model = tipbench::models::make_model("small_cnn");
    model.ptr()->to(torch::kCUDA);
    optimizer = s::make_optimizer(choice, model.ptr()->parameters());
    x = torch::randn({16, 3, 32, 32}, torch::kCUDA);
    y = torch::randint(10, {16}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kLong));
  }
  void step() {
    optimizer->zero_grad();
    torch::nn::functional::cross_entropy(model.forward(x), y).backward();
    optimizer->step();
  }
};

// Eight steps: eager, and 3 warm-up steps then 5 replays of the captured step.
void expect_replay_matches_eager(s::OptimizerChoice choice) {
  // Deterministic convolution algorithms: the two runs then differ only if the replay does.
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
  constexpr int kSteps = 8;
  Trainer eager(choice), graphed(choice);
  for (int i = 0; i < kSteps; ++i) eager.step();
  s::CapturedStep captured(
      torch::kCUDA, [&] { graphed.step(); }, /*warmup_steps=*/3,
      [&] { graphed.optimizer->zero_grad(/*set_to_none=*/true); });
  for (int i = captured.warmup_steps(); i < kSteps; ++i) captured.replay();
  torch::cuda::synchronize();
  const auto a = eager.model.ptr()->parameters(), b = graphed.model.ptr()->parameters();
  ASSERT_EQ(a.size(), b.size());
  double diff = 0, moved = 0;
  Trainer initial(choice);
  const auto start = initial.model.ptr()->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, (a[i] - b[i]).abs().max().item<double>());
    moved = std::max(moved, (a[i] - start[i]).abs().max().item<double>());
  }
  // float rounding of 8 steps is ~1e-6 of the weights' size; the replays moved them ~1e-3 or more
  // (a frozen AdamW bias correction would differ by far more than the rounding).
  EXPECT_LE(diff, 1e-5);
  EXPECT_GT(moved, 1e-3);
  at::globalContext().setDeterministicCuDNN(false);
}

TEST(CapturedStep, ReplayMatchesEager_CUDA) {
  TIPBENCH_REQUIRE_CUDA();
  expect_replay_matches_eager({});
}

TEST(CapturedStep, ReplayWithFusedAdamWMatchesEager_CUDA) {
  TIPBENCH_REQUIRE_CUDA();
  expect_replay_matches_eager({s::OptimizerKind::adamw, s::OptimizerImpl::fused});
}

}  // namespace
