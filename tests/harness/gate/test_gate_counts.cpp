// The gate's rule for counted work (count_checks.h) on synthetic results: equal counts pass, more
// work beyond the tolerance FAILs and names what moved, less work is no failure, arms without
// comparable counts are left out with a note, and counts are judged beside the times.
#include "tipbench/gate/count_checks.h"
#include "tipbench/gate/decision.h"
#include "tipbench/gate/gate_config.h"

#include "synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

namespace {

using tipbench::Result;
using tipbench::StepCounts;
using tipbench::testing::synthetic_run;
using tipbench::testing::SyntheticSpec;
namespace g = tipbench::gate;

StepCounts counts(double add_calls, double allocations = 145) {
  StepCounts c;
  c.steps = 2;
  c.ops = {{"aten::add_", add_calls, 0}, {"aten::mkldnn_convolution", 4, 0}};
  c.ops_per_step = add_calls + 4;
  c.top_level_ops_per_step = add_calls;
  c.allocations_per_step = allocations;
  c.allocated_bytes_per_step = 1000 * allocations;
  return c;
}

// Every arm's block-0 trial counted `c` (as a run does).
Result with_counts(Result r, const StepCounts& c) {
  for (auto& s : r.suites)
    for (auto& cs : s.cases)
      for (auto& a : cs.arms)
        if (!a.trials.empty()) a.trials.front().counts = c;
  return r;
}

const g::CountCheck* find(const g::GateReport& r, const std::string& metric, const std::string& arm = "treat") {
  for (const auto& c : r.count_checks) {
    if (c.metric == metric && c.arm == arm) return &c;
  }
  return nullptr;
}

g::GateReport gate(const Result& base, const Result& now) {
  return g::evaluate_gate(base, now, g::GateConfig{}, {.paired = false});
}

TEST(GateCounts, EqualCountsPassWithoutStatistics) {
  const auto base = with_counts(synthetic_run({.seed = 1}), counts(36));
  const auto now = with_counts(synthetic_run({.seed = 2}), counts(36));
  const auto r = gate(base, now);
  ASSERT_FALSE(r.count_checks.empty());
  for (const auto& c : r.count_checks) EXPECT_EQ(c.status, g::CountStatus::equal) << c.label();
  EXPECT_EQ(r.outcome, g::Outcome::pass);
  EXPECT_EQ(g::gate_report_to_json(r).at("count_checks_equal").get<std::size_t>(), r.count_checks.size());
}

// 14 more aten::add_ a step: the ops count FAILs, exactly, naming the op and its counts; the time
// check (no change planted) is not what failed.
TEST(GateCounts, MoreWorkFailsAndNamesWhatMoved) {
  const auto base = with_counts(synthetic_run({.seed = 1}), counts(36));
  const auto now = with_counts(synthetic_run({.seed = 2}), counts(50));
  const auto r = gate(base, now);
  const auto* ops = find(r, "ops_per_step");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->status, g::CountStatus::more);
  EXPECT_EQ(ops->baseline, 40);
  EXPECT_EQ(ops->current, 54);
  ASSERT_FALSE(ops->moved.empty());
  EXPECT_EQ(ops->moved.front(), "aten::add_ 36 -> 50");
  EXPECT_NE(ops->detail.find("more work"), std::string::npos) << ops->detail;
  EXPECT_FALSE(ops->time_status.empty()) << "judged beside its arm's time check";
  EXPECT_EQ(r.outcome, g::Outcome::fail);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(find(r, "allocations_per_step")->status, g::CountStatus::equal);
}

TEST(GateCounts, LessWorkIsNoFailureAndATolerancePassesSmallChanges) {
  const auto base = with_counts(synthetic_run({.seed = 1}), counts(50, 145));
  // Fewer ops; 0.5% more bytes (within the default 1% of allocated_bytes_per_step).
  auto c = counts(36, 145);
  c.allocated_bytes_per_step *= 1.005;
  const auto now = with_counts(synthetic_run({.seed = 2}), c);
  const auto r = gate(base, now);
  EXPECT_EQ(find(r, "ops_per_step")->status, g::CountStatus::less);
  EXPECT_EQ(find(r, "allocated_bytes_per_step")->status, g::CountStatus::within);
  EXPECT_EQ(r.outcome, g::Outcome::pass);
}

TEST(GateCounts, ArmsWithoutComparableCountsAreLeftOutWithANote) {
  const auto old_baseline = synthetic_run({.seed = 1});  // before 1.14: no counts
  const auto now = with_counts(synthetic_run({.seed = 2}), counts(50));
  auto r = gate(old_baseline, now);
  EXPECT_TRUE(r.count_checks.empty());
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                          [](const auto& n) { return n.find("the baseline counted none") != std::string::npos; }));
  auto unsteady = counts(50);
  unsteady.steady = false;
  r = gate(with_counts(synthetic_run({.seed = 1}), counts(36)), with_counts(synthetic_run({.seed = 2}), unsteady));
  EXPECT_TRUE(r.count_checks.empty());
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                          [](const auto& n) { return n.find("did not agree") != std::string::npos; }));
}

// Instructions by their relative tolerance (0.2%): Callgrind's A/A spread of a small_cnn step was
// 0.015%, so 0.1% more passes and 0.5% more FAILs; two counters, or counts under two oneDNN ISA
// caps, are never compared.
TEST(GateCounts, InstructionsAreComparedWithinTheirToleranceAndOnlyByOneCounter) {
  const auto with_instructions = [](double n, const char* counter) {
    auto c = counts(36);
    c.instructions_per_step = n;
    c.instruction_counter = counter;
    return c;
  };
  const auto base = with_counts(synthetic_run({.seed = 1}), with_instructions(141'165'412, "callgrind"));
  auto r = gate(base, with_counts(synthetic_run({.seed = 2}), with_instructions(141'306'577, "callgrind")));
  ASSERT_NE(find(r, "instructions_per_step"), nullptr);
  EXPECT_EQ(find(r, "instructions_per_step")->status, g::CountStatus::within);
  r = gate(base, with_counts(synthetic_run({.seed = 2}), with_instructions(141'871'239, "callgrind")));
  EXPECT_EQ(find(r, "instructions_per_step")->status, g::CountStatus::more);
  EXPECT_NE(find(r, "instructions_per_step")->detail.find("tolerance 0.2%"), std::string::npos);
  EXPECT_EQ(find(r, "ops_per_step")->status, g::CountStatus::equal) << "the ops did not change";
  r = gate(base, with_counts(synthetic_run({.seed = 2}), with_instructions(141'871'239, "perf_event")));
  EXPECT_EQ(find(r, "instructions_per_step"), nullptr);
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                          [](const auto& n) { return n.find("different counters") != std::string::npos; }));
  auto other_cap = with_instructions(141'871'239, "callgrind");
  other_cap.instructions_onednn_isa = "AVX";  // oneDNN's kernels were others: not compared
  r = gate(base, with_counts(synthetic_run({.seed = 2}), other_cap));
  EXPECT_EQ(find(r, "instructions_per_step"), nullptr);
  EXPECT_EQ(find(r, "ops_per_step")->status, g::CountStatus::equal) << "the other counts still are";
}

// A counter whose own steps spread wider than the tolerance (a perf_event count with interrupts'
// skid, say) widens it to that spread, in either run, and says so: 0.5% more passes against a
// 0.6% spread and FAILs against a 0.3% one. A spread under the tolerance changes nothing.
TEST(GateCounts, AnInstructionCountersOwnSpreadWidensItsTolerance) {
  const auto with_spread = [](double n, std::optional<double> spread) {
    auto c = counts(36);
    c.instructions_per_step = n;
    c.instruction_counter = "perf_event";
    c.instructions_spread = spread;
    return c;
  };
  const double base_count = 100'000'000, half_a_percent_more = 100'500'000;
  auto r = gate(with_counts(synthetic_run({.seed = 1}), with_spread(base_count, 0.006)),
                with_counts(synthetic_run({.seed = 2}), with_spread(half_a_percent_more, 0.0001)));
  const auto* check = find(r, "instructions_per_step");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->status, g::CountStatus::within) << check->detail;
  EXPECT_DOUBLE_EQ(check->tolerance, 0.006);
  EXPECT_NE(check->detail.find("tolerance 0.2%, widened to the counter's own spread between steps, 0.6%)"),
            std::string::npos)
      << check->detail;
  r = gate(with_counts(synthetic_run({.seed = 1}), with_spread(base_count, std::nullopt)),
           with_counts(synthetic_run({.seed = 2}), with_spread(half_a_percent_more, 0.003)));
  EXPECT_EQ(find(r, "instructions_per_step")->status, g::CountStatus::more) << find(r, "instructions_per_step")->detail;
  EXPECT_DOUBLE_EQ(find(r, "instructions_per_step")->tolerance, 0.003);
  r = gate(with_counts(synthetic_run({.seed = 1}), with_spread(base_count, 0.0001)),
           with_counts(synthetic_run({.seed = 2}), with_spread(half_a_percent_more, 0.0001)));
  EXPECT_EQ(find(r, "instructions_per_step")->status, g::CountStatus::more);
  EXPECT_DOUBLE_EQ(find(r, "instructions_per_step")->tolerance, 0.002);
  EXPECT_EQ(find(r, "instructions_per_step")->detail.find("widened"), std::string::npos);
}

// A time FAIL whose arm counted the same work says so; the counts cannot be what grew.
TEST(GateCounts, ATimeFailureWithTheSameWorkSaysSo) {
  const auto base = with_counts(synthetic_run({.cv = 0.002, .seed = 1}), counts(36));
  const auto now = with_counts(synthetic_run({.cv = 0.002, .factor = 0.8, .seed = 2}), counts(36));
  const auto r = gate(base, now);
  const auto slower = std::find_if(r.checks.begin(), r.checks.end(),
                                   [](const g::Check& c) { return c.status == g::CheckStatus::regression; });
  ASSERT_NE(slower, r.checks.end());
  EXPECT_NE(slower->detail.find("its counted work is the same"), std::string::npos) << slower->detail;
}

TEST(GateCounts, TheConfigReadsTolerancesAndRefusesWhatItDoesNotKnow) {
  const auto config = g::parse_gate_config(
      nlohmann::json::parse(
          R"({"counts": {"ops_per_step": {"tolerance_pct": 0}, "kernels_per_step": {"tolerance_pct": 2}}})"),
      "t.json");
  EXPECT_EQ(config.counts.size(), 2u);
  EXPECT_DOUBLE_EQ(config.counts.at("kernels_per_step"), 0.02);
  EXPECT_TRUE(g::parse_gate_config(nlohmann::json::parse(R"({"counts": {}})"), "t.json").counts.empty());
  for (const char* bad : {R"({"counts": {"instructions": {"tolerance_pct": 0}}})",
                          R"({"counts": {"ops_per_step": {"threshold_pct": 0}}})",
                          R"({"counts": {"ops_per_step": {"tolerance_pct": -1}}})", R"({"counts": []})"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(g::parse_gate_config(nlohmann::json::parse(bad), "t.json"), tipbench::InputError);
  }
  const auto round = g::parse_gate_config(g::gate_config_to_json(g::GateConfig{}), "again");
  EXPECT_EQ(round.counts, g::GateConfig{}.counts);
}

}  // namespace
