// The zero_grad suite (suites/zero_grad.cpp): its plan, and that its treatment arm really fills the
// gradients with zeros instead of setting them to None.
#include "suite_plan.h"
#include "tipbench/suite/registry.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(ZeroGradSuite, OneCasePerModelWithTheDefaultArmFirst) {
  const auto cases = suite_named("zero_grad").cases(cpu_context(true));
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(tipbench::case_name("zero_grad", cases[0]), "zero_grad/model:small_cnn/batch:32");
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"none", "zero"}));
  EXPECT_EQ(arm_names(suite_named("zero_grad").cases(cpu_context(false))[0]),
            (std::vector<std::string>{"none", "zero", "python_eager"}));       // Python eager beside C++
  EXPECT_EQ(tipbench::level(cases[0].arms[0].levels, "set_to_none"), "true");  // PyTorch's default
}

// The treatment arm runs its own zero_grad and records it; the default arm runs the default step.
TEST(ZeroGradSuite, TheZeroArmTrainsWithZeroFilledGradientsAndSaysSo) {
  const auto& s = suite_named("zero_grad");
  const auto c = s.cases(cpu_context(true))[0];
  auto none = s.prepare(cpu_context(true), c, c.arms[0], {});
  auto zero = s.prepare(cpu_context(true), c, c.arms[1], {});
  for (auto* w : {none.get(), zero.get()}) {
    w->step();
    w->step();
  }
  EXPECT_FALSE(none->info().contains("set_to_none")) << none->info().dump();
  EXPECT_EQ(zero->info().at("set_to_none"), false) << zero->info().dump();
}

}  // namespace
