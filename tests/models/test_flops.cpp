// The model FLOP table (tipbench/models/model_flops.h): each row's model is the C++ model (its parameter count),
// and the table is what PyTorch's own counter counts now, the attention's matrix products included
// (scripts/count_flops.py --check: it also shows that on a CPU the counter misses exactly the
// attention term when attention runs its fused kernel).
#include "child_process.h"
#include "test_paths.h"
#include "tipbench/models/model_flops.h"
#include "tipbench/models/model.h"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace m = tipbench::models;
using tipbench::reference_flop_table;
using tipbench::reference_flops;

TEST(ModelFlops, EveryRowIsABuiltInModelAtItsOwnImageSize) {
  ASSERT_EQ(reference_flop_table().size(), 7u);
  for (const auto& row : reference_flop_table()) {
    SCOPED_TRACE(row.model);
    auto model = m::make_model(row.model);
    EXPECT_EQ(m::count_parameters(*model.ptr()), row.parameters);
    EXPECT_EQ(m::resolved_image_size(row.model, {}), row.image_size);
    bool listed = false;
    for (const auto& info : m::available_models()) {
      if (info.name == row.model) listed = info.family == row.family;
    }
    EXPECT_TRUE(listed) << "family " << row.family;
    // Backward costs about twice the forward: the gradients of the inputs and of the weights.
    EXPECT_GT(row.training_flops, 2.5 * row.forward_flops);
    EXPECT_LT(row.training_flops, 3.0 * row.forward_flops);
    EXPECT_EQ(reference_flops(row.model, row.image_size), &row);
  }
  // ViT-B/16: 197 tokens of 768, 12 layers: 4 N^2 D per layer.
  EXPECT_EQ(reference_flops("vit_b_16", 224)->attention_forward_flops, 12.0 * 4 * 197 * 197 * 768);
  EXPECT_EQ(reference_flops("resnet50", 224)->attention_forward_flops, 0);
  EXPECT_EQ(reference_flops("resnet50", 192), nullptr);
  EXPECT_EQ(reference_flops("my_net", 224), nullptr);
}

TEST(ModelFlops, TheTableIsWhatPyTorchsCounterCounts) {
  const std::string source = TIPBENCH_SOURCE_DIR;
  const auto dir = tipbench::testing::fresh_scratch_dir("model_flops");
  const auto ran = tipbench::testing::run_child({TIPBENCH_PYTHON, source + "/scripts/count_flops.py", "--check",
                                                 source + "/models/flops/src/model_flop_table.cpp"},
                                                dir / "out.txt", dir / "err.txt");
  if (ran.code != 0 && ran.err.find("No module named 'torchvision'") != std::string::npos) {
    GTEST_SKIP() << "torchvision is not installed in " << TIPBENCH_PYTHON;
  }
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find("misses exactly the attention term"), std::string::npos) << ran.out;
}

}  // namespace
