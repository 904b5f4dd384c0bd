// The alignment suite (suites/alignment.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::ArmResult;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(AlignmentSuite, CpuPlanComparesWidthsAndBatchOneOffTheMultipleOfEight) {
  const auto& s = suite_named("alignment");
  const auto context = cpu_context(true);
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(tipbench::case_name("alignment", cases[0]), "alignment/model:small_cnn/size:batch");
  EXPECT_EQ(tipbench::join_levels(cases[0].arms[0].levels), "batch:32");
  EXPECT_EQ(tipbench::join_levels(cases[0].arms[1].levels), "batch:31");
  EXPECT_EQ(tipbench::case_name("alignment", cases[1]),
            "alignment/model:vit_ti_16/batch:8/image:32/layers:2/size:widths");
  const auto aligned = s.prepare(context, cases[1], cases[1].arms[0], {})->info();
  const auto unaligned = s.prepare(context, cases[1], cases[1].arms[1], {})->info();
  EXPECT_EQ(aligned.at("hidden_dim"), 192);
  EXPECT_EQ(aligned.at("mlp_dim"), 768);
  EXPECT_EQ(unaligned.at("hidden_dim"), 189);  // 3 heads x 63
  EXPECT_EQ(unaligned.at("mlp_dim"), 755);
  EXPECT_EQ(unaligned.at("head_dim"), 63);
  const double ratio = unaligned.at("parameters").get<double>() / aligned.at("parameters").get<double>();
  EXPECT_GT(ratio, 0.95);  // a few percent smaller, so the note normalises by parameters
  EXPECT_LT(ratio, 1.0);
}

TEST(AlignmentSuite, BatchOneHasNoSmallerBatch) {
  const auto& s = suite_named("alignment");
  auto context = cpu_context(true);
  context.batch_size = 1;
  const auto c = s.cases(context)[0];
  EXPECT_FALSE(s.skip_reason(context, c, c.arms[0]));
  const auto why = s.skip_reason(context, c, c.arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "--batch 2")) << *why;
}

ArmResult widths_arm(const std::string& name, double throughput, double parameters) {
  ArmResult a = tipbench::testing::measured_arm(name, {}, throughput);
  a.info = {{"parameters", parameters}, {"hidden_dim", 1}, {"mlp_dim", 1}};
  return a;
}

TEST(AlignmentSuite, NoteComparesThroughputTimesParameters) {
  tipbench::SuiteResult r;
  tipbench::CaseResult c;
  c.name = "alignment/model:vit_ti_16/size:widths";
  c.params = {{"model", "vit_ti_16"}, {"size", "widths"}};
  // Unaligned: 3% fewer parameters and 3% more samples/s: the same work rate.
  c.arms = {widths_arm("aligned", 100, 1000), widths_arm("unaligned", 103, 970)};
  r.cases.push_back(c);
  const auto notes = suite_named("alignment").notes(r, tipbench::MeasureSettings{});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0], "x1.00")) << notes[0];
}

}  // namespace
