// The channels_last suite (suites/channels_last.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "suite_plan.h"
#include "tipbench/explain/explain.h"
#include "tipbench/suite/registry.h"
#include "tipbench/measure/trial.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(ChannelsLastSuite, CnnsInTwoPrecisionsViTsSkippedWithTheReason) {
  const auto& s = suite_named("channels_last");
  auto context = cpu_context(true);
  context.models = {"small_cnn", "vit_ti_16"};
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(tipbench::case_name("channels_last", cases[1]), "channels_last/model:small_cnn/batch:4/precision:bf16");
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"nchw", "nhwc"}));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[1]));
  const auto why = s.skip_reason(context, cases[2], cases[2].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "patch projection")) << *why;
  auto workload = s.prepare(context, cases[0], cases[0].arms[1], {});
  EXPECT_EQ(workload->info().at("channels_last"), true);
}

// `run --explain` on the real suite: the channels_last step converts layouts, and the explanation
// shows it as copy ops whose calls per step grew (or appeared), whatever their time did.
TEST(ChannelsLastSuite, ExplainShowsTheLayoutCopiesChannelsLastAdds) {
  const auto& s = suite_named("channels_last");
  const auto context = cpu_context(true);
  const auto c = s.cases(context).front();  // small_cnn, fp32
  auto settings = tipbench::testing::short_trial();
  settings.explain_steps = 2;
  tipbench::ArmResult nchw, nhwc;
  for (int block = 0; block < 3; ++block) {
    nchw.trials.push_back(tipbench::run_trial(s, context, c, c.arms[0], settings, block, 0).trial);
    nhwc.trials.push_back(tipbench::run_trial(s, context, c, c.arms[1], settings, block, 1).trial);
  }
  const auto e = tipbench::explain_arms(nhwc, nchw, {.top = 20});  // every count change listed
  std::string all;
  for (const auto& line : tipbench::explanation_lines(e, 20)) all += line + "\n";
  bool more_copies = false;
  for (const auto* list : {&e.causes, &e.count_changes}) {
    for (const auto& cause : *list) {
      const bool copy = cause.op == "aten::copy_" || cause.op == "aten::_to_copy" || cause.op == "aten::clone" ||
                        cause.op == "aten::contiguous" || cause.op == "aten::to";
      more_copies = more_copies || (copy && cause.treatment_calls > cause.baseline_calls);
    }
  }
  EXPECT_TRUE(more_copies) << all;
}

}  // namespace
