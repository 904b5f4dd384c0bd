// The inplace suite's claim: a CNN whose ReLUs overwrite their input computes the same outputs
// and the same gradients as one whose ReLUs make new tensors. ReLU's backward reads its output
// (grad * (y > 0)), which the in-place form leaves in the overwritten buffer, and BatchNorm's
// backward, the op before it, reads its input and saved statistics, not its output. So the two
// run the same kernels on the same values: the check is bit-for-bit (torch::equal), not a
// tolerance, on whatever CPU runs it.
#include "tipbench/models/model.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace {

namespace models = tipbench::models;

struct Pass {
  torch::Tensor output;
  std::vector<std::pair<std::string, torch::Tensor>> grads;  // by parameter name
};

Pass forward_backward(const std::string& name, bool inplace) {
  torch::manual_seed(0);
  auto model = models::make_model(name, {.num_classes = 10, .image_size = 32, .inplace_relu = inplace});
  model.ptr()->train();
  torch::manual_seed(1);
  const auto x = torch::randn({4, 3, 32, 32});
  const auto labels = torch::randint(10, {4}, torch::kLong);
  Pass p;
  p.output = model.forward(x);
  torch::nn::functional::cross_entropy(p.output, labels).backward();
  for (const auto& item : model.ptr()->named_parameters()) p.grads.emplace_back(item.key(), item.value().grad());
  return p;
}

class InplaceRelu : public ::testing::TestWithParam<std::string> {};

TEST_P(InplaceRelu, SameOutputsAndGradientsBitForBit) {
  const Pass out_of_place = forward_backward(GetParam(), false);
  const Pass inplace = forward_backward(GetParam(), true);
  EXPECT_TRUE(torch::equal(out_of_place.output, inplace.output));
  ASSERT_EQ(out_of_place.grads.size(), inplace.grads.size());
  for (std::size_t i = 0; i < inplace.grads.size(); ++i) {
    SCOPED_TRACE(inplace.grads[i].first);
    ASSERT_EQ(out_of_place.grads[i].first, inplace.grads[i].first);
    ASSERT_TRUE(inplace.grads[i].second.defined());
    EXPECT_TRUE(torch::equal(out_of_place.grads[i].second, inplace.grads[i].second));
    EXPECT_GT(inplace.grads[i].second.abs().sum().item<double>(), 0) << "a gradient that is all zeros proves nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(Cnns, InplaceRelu, ::testing::Values("small_cnn", "resnet18", "resnet50"));

}  // namespace
