// The tf32 suite (suites/tf32.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "common/fp32_math.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(Tf32Suite, SkippedOffCudaWithTheReason) {
  const auto& s = suite_named("tf32");
  const auto context = cpu_context(true);
  const auto cases = s.cases(context);
  ASSERT_FALSE(cases.empty());
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"default", "tf32", "ieee"}));
  const auto why = s.skip_reason(context, cases[0], cases[0].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "cpu")) << *why;
}

// The knobs read back as each mode sets them, and the restore puts the process's values back.
TEST(Fp32Math, EachModeReadsBackAndIsPutBack) {
  namespace s = tipbench::suites;
  const auto before = s::fp32_math_info();
  EXPECT_EQ(before.at("matmul_precision"), "highest");  // PyTorch's defaults
  EXPECT_EQ(before.at("cudnn_tf32"), true);
  struct Expected {
    s::Fp32Math math;
    const char* matmul;
    bool cublas, cudnn;
  };
  for (const auto& e :
       {Expected{s::Fp32Math::pytorch_default, "highest", false, true},
        Expected{s::Fp32Math::ieee, "highest", false, false}, Expected{s::Fp32Math::tf32, "high", true, true}}) {
    const auto restore = s::set_fp32_math(e.math);
    const auto info = s::fp32_math_info();
    EXPECT_EQ(info.at("matmul_precision"), e.matmul);
    EXPECT_EQ(info.at("cublas_tf32"), e.cublas);
    EXPECT_EQ(info.at("cudnn_tf32"), e.cudnn);
    restore();
    EXPECT_EQ(s::fp32_math_info(), before);
  }
}

}  // namespace
