// The determinism suite's knobs (suites/determinism/determinism.h): they read back as set, and under
// them two training runs from the same seed leave bit-identical parameters on the CPU. The
// knobs are process-wide; every test puts back what it found.
#include "determinism/determinism.h"
#include "tipbench/models/model.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

using tipbench::suites::apply;
using tipbench::suites::current_determinism;
using tipbench::suites::Determinism;

bool same(const Determinism& a, const Determinism& b) {
  return a.algorithms == b.algorithms && a.cudnn_deterministic == b.cudnn_deterministic &&
         a.cudnn_benchmark == b.cudnn_benchmark;
}

class DeterminismKnobs : public ::testing::Test {
 protected:
  void TearDown() override { apply(before_); }
  const Determinism before_ = current_determinism();
};

TEST_F(DeterminismKnobs, ReadBackAsSet) {
  apply(Determinism::deterministic());
  EXPECT_TRUE(same(current_determinism(), Determinism::deterministic()));
  const auto info = tipbench::suites::determinism_info();
  EXPECT_TRUE(info.at("deterministic_algorithms").get<bool>());
  EXPECT_TRUE(info.at("cudnn_deterministic").get<bool>());
  EXPECT_FALSE(info.at("cudnn_benchmark").get<bool>());
  apply(Determinism{});
  EXPECT_TRUE(same(current_determinism(), Determinism{}));
}

// Parameters of small_cnn after `steps` SGD-momentum steps on fixed random data.
std::vector<torch::Tensor> train(int steps) {
  torch::manual_seed(0);
  auto model = tipbench::models::make_model("small_cnn");
  torch::optim::SGD sgd(model.ptr()->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  const auto x = torch::randn({16, 3, 32, 32});
  const auto labels = torch::randint(10, {16}, torch::kLong);
  for (int i = 0; i < steps; ++i) {
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(model.forward(x), labels).backward();
    sgd.step();
  }
  std::vector<torch::Tensor> out;
  for (const auto& p : model.ptr()->parameters()) out.push_back(p.detach().clone());
  return out;
}

TEST_F(DeterminismKnobs, TwoDeterministicRunsLeaveBitIdenticalParameters) {
  apply(Determinism::deterministic());
  const auto first = train(5);
  const auto second = train(5);
  ASSERT_EQ(first.size(), second.size());
  const auto initial = [] {
    torch::manual_seed(0);
    return tipbench::models::make_model("small_cnn").ptr()->parameters();
  }();
  bool trained = false;
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_TRUE(torch::equal(first[i], second[i])) << "parameter " << i;
    trained |= !torch::equal(first[i], initial[i]);
  }
  EXPECT_TRUE(trained) << "the runs must have changed the parameters for the comparison to mean anything";
}

}  // namespace
