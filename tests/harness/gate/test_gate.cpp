// The regression gate's decision on synthetic runs with known answers: A/A passes (and false
// alarms stay rare across many gates thanks to Holm + the practical threshold), a planted 5%
// slowdown is caught and confirmed, a flag that does not reproduce passes, noise gives
// INCONCLUSIVE, missing suites and failed arms are reported; plus the config file's strictness,
// the merge of an interleaved session's blocks, and the JSON form.
#include "tipbench/gate/decision.h"
#include "tipbench/gate/gate_config.h"
#include "tipbench/gate/merge.h"

#include "synthetic.h"
#include "test_paths.h"

#include <gtest/gtest.h>

namespace {

using tipbench::InputError;
using tipbench::Result;
using tipbench::testing::synthetic_run;
using tipbench::testing::SyntheticSpec;
namespace g = tipbench::gate;

g::GateReport stored_gate(const Result& base, const Result& current, const g::GateConfig& config = {}) {
  return g::evaluate_gate(base, current, config, {.paired = false, .seed = 1});
}

// A re-measurement drawn fresh from the same world as `current` (a real effect reproduces, noise does not).
g::Remeasure remeasure_from(const Result& base, SyntheticSpec again) {
  return [base, again](const std::vector<g::CellKey>& keys) {
    const Result fresh = synthetic_run(again);
    std::map<g::CellKey, g::CellComparison> out;
    const auto rc = g::compare_runs(base, fresh, {.seed = 2});
    for (const auto& c : rc.cells) {
      if (std::find(keys.begin(), keys.end(), c.key) != keys.end()) out.emplace(c.key, c);
    }
    return out;
  };
}

int count(const g::GateReport& r, g::CheckStatus s) {
  return static_cast<int>(
      std::count_if(r.checks.begin(), r.checks.end(), [&](const auto& c) { return c.status == s; }));
}

TEST(Gate, AAPassesWithExitZero) {
  const auto base = synthetic_run({.cv = 0.005, .seed = 1});
  const auto current = synthetic_run({.cv = 0.005, .seed = 2});
  auto report = stored_gate(base, current);
  g::confirm_candidates(report, remeasure_from(base, {.cv = 0.005, .seed = 3}), {});
  EXPECT_EQ(report.outcome, g::Outcome::pass);
  EXPECT_EQ(report.exit_code(), 0);
  EXPECT_EQ(report.checks.size(), 2u);  // throughput of both arms; CPU memory is not gated by default
  EXPECT_EQ(count(report, g::CheckStatus::pass), 2);
}

// Calibration on synthetic streams: 40 A/A gates of 20 checks each (10 blocks, 1% CV) raise at
// most a few candidates before confirmation, and none survive it.
TEST(Gate, AAAcrossManyGatesRarelyFlagsAndNeverFails) {
  int gates_with_candidates = 0;
  int failed = 0;
  constexpr int kGates = 40;
  for (std::uint64_t i = 0; i < kGates; ++i) {
    SyntheticSpec spec{.suites = {"s1", "s2", "s3", "s4", "s5"}, .cases_per_suite = 2, .cv = 0.01, .memory = false};
    spec.seed = 100 + 3 * i;
    const auto base = synthetic_run(spec);
    spec.seed += 1;
    const auto current = synthetic_run(spec);
    auto report = stored_gate(base, current);
    ASSERT_EQ(report.checks.size(), 20u);
    gates_with_candidates +=
        std::any_of(report.checks.begin(), report.checks.end(), [](const auto& c) { return c.candidate; });
    spec.seed += 1;
    g::confirm_candidates(report, remeasure_from(base, spec), {});
    failed += report.outcome == g::Outcome::fail;
  }
  std::printf("A/A: %d of %d gates (20 checks each) raised a candidate; %d failed after confirmation\n",
              gates_with_candidates, kGates, failed);
  EXPECT_LE(gates_with_candidates, 3);
  EXPECT_EQ(failed, 0);
}

TEST(Gate, PlantedFivePercentSlowdownIsCaughtAndConfirmed) {
  int caught = 0;
  for (std::uint64_t i = 0; i < 20; ++i) {
    const auto base = synthetic_run({.cv = 0.01, .seed = 10 * i});
    const auto current = synthetic_run({.cv = 0.01, .factor = 0.95, .seed = 10 * i + 1});
    auto report = stored_gate(base, current);
    g::confirm_candidates(report, remeasure_from(base, {.cv = 0.01, .factor = 0.95, .seed = 10 * i + 2}), {});
    caught += report.outcome == g::Outcome::fail && report.exit_code() == 1;
    if (report.outcome == g::Outcome::fail) {
      EXPECT_NE(report.checks.front().detail.find("confirmed on re-run"), std::string::npos)
          << report.checks.front().detail;
      EXPECT_TRUE(report.checks.front().rerun.has_value());
    }
  }
  EXPECT_EQ(caught, 20);
}

// A CPU run's CPU time per step is a cell of its own (lower is better); a config that gates it
// catches a slowdown there, and the default config leaves it ungated.
TEST(Gate, CpuTimeIsGatedWhereTheConfigSaysSo) {
  const auto base = synthetic_run({.cv = 0.01, .seed = 7, .cpu_time = true});
  const auto current = synthetic_run({.cv = 0.01, .factor = 0.95, .seed = 8, .cpu_time = true});
  const auto cells = g::extract_cells(current);
  EXPECT_EQ(std::count_if(cells.begin(), cells.end(), [](const g::Cell& c) { return c.key.metric == g::kCpuTime; }), 2);
  EXPECT_FALSE(g::higher_is_better(g::kCpuTime));

  g::GateConfig cpu_time;
  cpu_time.metrics = {{g::kCpuTime, 0.03}};
  auto report = stored_gate(base, current, cpu_time);
  g::confirm_candidates(report, remeasure_from(base, {.cv = 0.01, .factor = 0.95, .seed = 9, .cpu_time = true}),
                        cpu_time);
  EXPECT_EQ(report.exit_code(), 1);
  ASSERT_FALSE(report.checks.empty());
  for (const auto& check : report.checks) EXPECT_EQ(check.key.metric, g::kCpuTime);
  EXPECT_NE(report.checks.front().key.label().find("cpu time"), std::string::npos) << report.checks.front().key.label();

  const auto by_default = stored_gate(base, current);
  for (const auto& check : by_default.checks) EXPECT_NE(check.key.metric, g::kCpuTime);
}

TEST(Gate, ACandidateThatDoesNotReproduceIsTreatedAsNoise) {
  const auto base = synthetic_run({.cv = 0.01, .seed = 1});
  const auto current = synthetic_run({.cv = 0.01, .factor = 0.9, .seed = 2});  // a one-off slow run
  auto report = stored_gate(base, current);
  ASSERT_TRUE(std::any_of(report.checks.begin(), report.checks.end(), [](const auto& c) { return c.candidate; }));
  g::confirm_candidates(report, remeasure_from(base, {.cv = 0.01, .factor = 1.0, .seed = 3}), {});
  EXPECT_EQ(report.outcome, g::Outcome::pass);
  EXPECT_NE(report.checks.front().detail.find("not reproduced"), std::string::npos) << report.checks.front().detail;
}

TEST(Gate, WithoutARemeasurementACandidateFailsUnconfirmed) {
  const auto base = synthetic_run({.cv = 0.01, .seed = 1});
  const auto current = synthetic_run({.cv = 0.01, .factor = 0.8, .seed = 2});
  auto report = stored_gate(base, current);
  g::confirm_candidates(report, g::Remeasure{}, {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_NE(report.checks.front().detail.find("NOT confirmed"), std::string::npos);
}

TEST(Gate, NoisyRunsAreInconclusiveWithARecommendation) {
  const auto base = synthetic_run({.cv = 0.06, .seed = 1});
  const auto current = synthetic_run({.cv = 0.06, .seed = 2});
  auto report = stored_gate(base, current);
  g::confirm_candidates(report, remeasure_from(base, {.cv = 0.06, .seed = 3}), {});
  EXPECT_EQ(report.outcome, g::Outcome::inconclusive);
  EXPECT_EQ(report.exit_code(), 3);
  ASSERT_FALSE(report.recommendations.empty());
  EXPECT_NE(report.recommendations.front().find("--blocks"), std::string::npos);
}

TEST(Gate, ASuiteMissingFromTheBaselineIsInconclusive) {
  const auto base = synthetic_run({.suites = {"zero_grad"}, .cv = 0.005, .seed = 1});
  const auto current = synthetic_run({.suites = {"zero_grad", "conv_bias"}, .cv = 0.005, .seed = 2});
  const auto report = stored_gate(base, current);
  EXPECT_EQ(report.exit_code(), 3);
  ASSERT_FALSE(report.problems.empty());
  EXPECT_NE(report.problems.front().find("conv_bias is not in the baseline"), std::string::npos)
      << report.problems.front();
}

TEST(Gate, ASuiteNotRunNowIsANoteNotAProblem) {
  const auto base = synthetic_run({.suites = {"zero_grad", "conv_bias"}, .cv = 0.005, .seed = 1});
  const auto current = synthetic_run({.suites = {"zero_grad"}, .cv = 0.005, .seed = 2});
  const auto report = stored_gate(base, current);
  EXPECT_EQ(report.exit_code(), 0);
  EXPECT_TRUE(std::any_of(report.notes.begin(), report.notes.end(),
                          [](const auto& n) { return n.find("conv_bias was not run now") != std::string::npos; }));
}

TEST(Gate, AnArmThatFailsNowIsARegression) {
  const auto base = synthetic_run({.cv = 0.005, .seed = 1});
  auto current = synthetic_run({.cv = 0.005, .seed = 2});
  auto& arm = current.suites[0].cases[0].arms[1];
  arm.status = tipbench::ArmStatus::failed;
  arm.reason = "CUDA out of memory";
  arm.trials.clear();
  auto report = stored_gate(base, current);
  g::confirm_candidates(report, g::Remeasure{}, {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_NE(report.checks.front().detail.find("out of memory"), std::string::npos);
}

TEST(Gate, NothingInCommonIsInconclusive) {
  const auto base = synthetic_run({.suites = {"a"}, .seed = 1});
  const auto current = synthetic_run({.suites = {"b"}, .seed = 2});
  EXPECT_EQ(stored_gate(base, current).exit_code(), 3);
}

// Drift shared by both sides of a block cancels when blocks pair (same-machine interleaved),
// but makes an unpaired comparison of the same numbers too noisy to decide.
TEST(Gate, PairingRemovesSharedBlockDrift) {
  const auto base = synthetic_run({.cv = 0.10, .seed = 7});
  const auto current = synthetic_run({.cv = 0.10, .factor = 0.99, .seed = 7});  // same drift, 1% slower
  const auto paired = g::evaluate_gate(base, current, {}, {.paired = true});
  const auto unpaired = g::evaluate_gate(base, current, {}, {.paired = false});
  EXPECT_EQ(paired.outcome, g::Outcome::pass);
  EXPECT_EQ(unpaired.outcome, g::Outcome::inconclusive);
  EXPECT_LT(paired.checks.front().comparison->cv, 1e-9);
}

TEST(Gate, OneRealRegressionAmongManyQuietCellsSurvivesHolm) {
  SyntheticSpec spec{.suites = {"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10"},
                     .cases_per_suite = 2,
                     .cv = 0.01,
                     .seed = 1,
                     .memory = false};
  const auto base = synthetic_run(spec);
  spec.seed = 2;
  auto current = synthetic_run(spec);
  for (auto& t : current.suites[4].cases[1].arms[1].trials) t.throughput_samples_per_s *= 0.9;
  const auto report = stored_gate(base, current);
  ASSERT_EQ(report.checks.size(), 40u);
  EXPECT_TRUE(report.checks.front().candidate);
  EXPECT_EQ(report.checks.front().key.suite, "s5");
  EXPECT_EQ(std::count_if(report.checks.begin(), report.checks.end(), [](const auto& c) { return c.candidate; }), 1);
}

TEST(Gate, ResamplesLetTheSmallestPValuePassHolmsStrictestLevel) {
  for (std::size_t m : {1u, 10u, 100u, 1000u}) {
    const double smallest_p = 2.0 / static_cast<double>(g::resamples_for(m, 0.05) + 1);
    EXPECT_LT(smallest_p, 0.05 / static_cast<double>(m)) << m;
  }
}

TEST(Gate, ChecksAreSortedWorstFirstAndJsonCarriesTheOutcome) {
  const auto base = synthetic_run({.cv = 0.01, .seed = 1});
  auto current = synthetic_run({.cv = 0.01, .seed = 2});
  for (auto& t : current.suites[0].cases[0].arms[0].trials) t.throughput_samples_per_s *= 0.8;
  auto report = stored_gate(base, current);
  g::confirm_candidates(report, g::Remeasure{}, {});
  EXPECT_EQ(report.checks.front().key.arm, "base");
  const auto j = g::gate_report_to_json(report);
  EXPECT_EQ(j.at("outcome"), "FAIL");
  EXPECT_EQ(j.at("exit_code"), 1);
  EXPECT_EQ(j.at("checks").size(), report.checks.size());
  EXPECT_TRUE(j.at("checks")[0].contains("comparison"));
}

// ---------------------------------------------------------------------------------------------
// The config file.

// Two A/A runs on two machines of one kind differ by a level that no block shows (GPU-like: 0.05%
// block noise, 1.2% apart). At a 1% threshold the blocks alone call that a confirmed regression;
// with the GPU floor of the between-run spread (0.5% per run) it cannot fail.
TEST(Gate, ALevelShiftBetweenMachinesWithinTheBetweenRunSpreadNeverFails) {
  const SyntheticSpec base_spec{.cv = 0.0005, .seed = 41};
  const SyntheticSpec other_machine{.cv = 0.0005, .factor = 0.988, .seed = 42};
  const auto base = synthetic_run(base_spec);
  const auto current = synthetic_run(other_machine);
  g::GateConfig config;
  config.metrics = {{g::kThroughput, 0.01}};
  auto blocks_only = stored_gate(base, current, config);
  g::confirm_candidates(blocks_only, remeasure_from(base, {.cv = 0.0005, .factor = 0.988, .seed = 43}), config);
  EXPECT_EQ(blocks_only.outcome, g::Outcome::fail) << "the blocks alone see a regression";

  const auto on_gpu = config.for_device("cuda:0");
  EXPECT_DOUBLE_EQ(on_gpu.between_runs.floor, 0.005);
  EXPECT_DOUBLE_EQ(config.for_device("cpu").between_runs.floor, 0) << "none on a CPU by default";
  auto with_spread = stored_gate(base, current, on_gpu);
  g::confirm_candidates(with_spread, remeasure_from(base, {.cv = 0.0005, .factor = 0.988, .seed = 43}), on_gpu);
  EXPECT_NE(with_spread.outcome, g::Outcome::fail);
  ASSERT_FALSE(with_spread.checks.empty());
  EXPECT_NE(with_spread.checks.front().detail.find("between runs 0.50% (floor)"), std::string::npos)
      << with_spread.checks.front().detail;

  // A real 5% slowdown still fails through the spread.
  auto slower = stored_gate(base, synthetic_run({.cv = 0.0005, .factor = 0.95, .seed = 44}), on_gpu);
  g::confirm_candidates(slower, remeasure_from(base, {.cv = 0.0005, .factor = 0.95, .seed = 45}), on_gpu);
  EXPECT_EQ(slower.outcome, g::Outcome::fail);
}

// Measured from repeated runs: a cell held by at least 3 of them gets their SD of log medians,
// never below the floor; others get the floor.
TEST(Gate, TheBetweenRunSpreadIsMeasuredFromRepeatedRunsAboveTheFloor) {
  std::vector<Result> runs;
  for (double factor : {1.0, 1.02, 0.98, 1.01})
    runs.push_back(synthetic_run({.cv = 0.0005, .factor = factor, .seed = 7, .memory = false}));
  const auto spread = g::between_run_spread(runs, 0.005);
  ASSERT_FALSE(spread.measured.empty());
  const auto& [key, measured] = *spread.measured.begin();
  EXPECT_EQ(measured.runs, 4u);
  EXPECT_NEAR(measured.sd, 0.0171, 0.002);  // SD of log(1, 1.02, 0.98, 1.01)
  EXPECT_DOUBLE_EQ(spread.for_cell(key), measured.sd);
  EXPECT_NE(spread.describe(key).find("4 stored runs"), std::string::npos) << spread.describe(key);
  const g::CellKey other{"x", "x/model:m", "base", g::kThroughput};
  EXPECT_DOUBLE_EQ(spread.for_cell(other), 0.005);
  runs.resize(2);
  EXPECT_TRUE(g::between_run_spread(runs, 0.005).measured.empty()) << "two runs measure no spread";
}

TEST(GateConfig, ParsesThresholdsInPercentWithSuiteOverrides) {
  const auto cfg = g::parse_gate_config(nlohmann::json::parse(R"({
    "description": "x", "alpha": 0.01,
    "metrics": {"throughput_samples_per_s": {"threshold_pct": 4}, "peak_allocated_bytes": {"threshold_pct": 5}},
    "suites": {"cudnn_benchmark": {"throughput_samples_per_s": {"threshold_pct": 8}},
               "zero_grad": {"peak_allocated_bytes": {"threshold_pct": 0}}}})"),
                                        "cfg");
  EXPECT_DOUBLE_EQ(cfg.alpha, 0.01);
  EXPECT_DOUBLE_EQ(*cfg.threshold_for("conv_bias", "throughput_samples_per_s"), 0.04);
  EXPECT_DOUBLE_EQ(*cfg.threshold_for("cudnn_benchmark", "throughput_samples_per_s"), 0.08);
  EXPECT_DOUBLE_EQ(*cfg.threshold_for("conv_bias", "peak_allocated_bytes"), 0.05);
  EXPECT_FALSE(cfg.threshold_for("zero_grad", "peak_allocated_bytes"));   // 0 turns it off
  EXPECT_FALSE(cfg.threshold_for("conv_bias", "peak_rss_growth_bytes"));  // not listed: not gated
}

// cpu_metrics replace metrics for a run on a CPU only; suite overrides still apply on top.
TEST(GateConfig, CpuMetricsReplaceMetricsForACpuRun) {
  const auto cfg = g::parse_gate_config(nlohmann::json::parse(R"({
    "metrics": {"throughput_samples_per_s": {"threshold_pct": 3}},
    "cpu_metrics": {"step_cpu_time_ms": {"threshold_pct": 4}},
    "suites": {"dataloader": {"step_cpu_time_ms": {"threshold_pct": 0}, "throughput_samples_per_s": {"threshold_pct": 5}}}})"),
                                        "cfg");
  const auto cpu = cfg.for_device("cpu");
  EXPECT_DOUBLE_EQ(*cpu.threshold_for("zero_grad", g::kCpuTime), 0.04);
  EXPECT_FALSE(cpu.threshold_for("zero_grad", g::kThroughput));
  EXPECT_FALSE(cpu.threshold_for("dataloader", g::kCpuTime));
  EXPECT_DOUBLE_EQ(*cpu.threshold_for("dataloader", g::kThroughput), 0.05);
  const auto gpu = cfg.for_device("cuda:0");
  EXPECT_DOUBLE_EQ(*gpu.threshold_for("zero_grad", g::kThroughput), 0.03);
  EXPECT_FALSE(gpu.threshold_for("zero_grad", g::kCpuTime));
  // Without cpu_metrics a CPU run is gated like any other.
  EXPECT_DOUBLE_EQ(*g::GateConfig{}.for_device("cpu").threshold_for("zero_grad", g::kThroughput), 0.03);
  EXPECT_EQ(g::parse_gate_config(g::gate_config_to_json(cfg), "again").cpu_metrics, cfg.cpu_metrics);
}

TEST(GateConfig, DefaultGatesThroughputAtThreePercent) {
  const g::GateConfig cfg;
  EXPECT_DOUBLE_EQ(*cfg.threshold_for("anything", "throughput_samples_per_s"), 0.03);
  EXPECT_DOUBLE_EQ(cfg.alpha, 0.05);
}

TEST(GateConfig, UnknownKeysAndBadValuesAreErrorsNamingThem) {
  const auto expect_error = [](const char* text, const char* needle) {
    try {
      (void)g::parse_gate_config(nlohmann::json::parse(text), "cfg.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"thresholds": {}})", "unknown key 'thresholds'");
  expect_error(R"({"metrics": {"latency": {"threshold_pct": 3}}})", "unknown metric 'latency'");
  expect_error(R"({"metrics": {"throughput_samples_per_s": {"pct": 3}}})", "unknown key 'pct'");
  expect_error(R"({"metrics": {"throughput_samples_per_s": {"threshold_pct": -1}}})", "threshold_pct");
  expect_error(R"({"metrics": {"throughput_samples_per_s": {}}})", "needs \"threshold_pct\"");
  expect_error(R"({"alpha": 2})", "alpha");
  expect_error(R"([1, 2])", "must be a JSON object");
  expect_error(R"({"suites": {"zero_grad": {"throughput_samples_per_s": 3}}})", "must be an object");
  expect_error(R"({"between_run_floor_pct": {"tpu": 1}})", "unknown device kind 'tpu'");
  expect_error(R"({"between_run_floor_pct": {"cuda": 80}})", "between_run_floor_pct.cuda");
  expect_error(R"({"between_run_floor_pct": 1})", "must be an object");
}

TEST(GateConfig, RoundTripsThroughJson) {
  g::GateConfig cfg;
  cfg.alpha = 0.02;
  cfg.suites["s"]["peak_allocated_bytes"] = 0.07;
  cfg.between_run_floor["cuda"] = 0.0025;
  const auto back = g::parse_gate_config(g::gate_config_to_json(cfg), "round trip");
  EXPECT_DOUBLE_EQ(back.between_run_floor.at("cuda"), 0.0025);
  EXPECT_DOUBLE_EQ(back.between_run_floor.at("cpu"), 0);
  EXPECT_DOUBLE_EQ(back.alpha, 0.02);
  EXPECT_DOUBLE_EQ(*back.threshold_for("s", "peak_allocated_bytes"), 0.07);
}

TEST(GateConfig, TheCommittedConfigParses) {
  const auto cfg = g::read_gate_config(std::string(TIPBENCH_SOURCE_DIR) + "/ci/gate-thresholds.json");
  EXPECT_TRUE(cfg.threshold_for("zero_grad", "throughput_samples_per_s").has_value());
  EXPECT_FALSE(cfg.threshold_for("zero_grad", g::kCpuTime).has_value());  // a GPU run: no CPU time
  // A CPU run: CPU time, but wall-clock throughput for the suites whose tips are parallelism.
  const auto cpu = cfg.for_device("cpu");
  EXPECT_EQ(cpu.threshold_for("zero_grad", g::kCpuTime), 0.03);
  EXPECT_FALSE(cpu.threshold_for("zero_grad", g::kThroughput).has_value());
  for (const std::string suite : {"dataloader", "data_parallel"}) {
    EXPECT_FALSE(cpu.threshold_for(suite, g::kCpuTime).has_value()) << suite;
    EXPECT_TRUE(cpu.threshold_for(suite, g::kThroughput).has_value()) << suite;
  }
}

// ---------------------------------------------------------------------------------------------
// Merging the per-block results of an interleaved session.

TEST(MergeBlocks, NumbersBlocksInSessionOrderAndResummarizes) {
  std::vector<Result> blocks;
  for (int b = 0; b < 4; ++b)
    blocks.push_back(synthetic_run({.blocks = 1, .throughput = 100.0 + b, .cv = 0, .seed = 1}));
  const Result merged = g::merge_blocks(blocks);
  const auto& arm = merged.suites[0].cases[0].arms[0];
  ASSERT_EQ(arm.trials.size(), 4u);
  for (int b = 0; b < 4; ++b) EXPECT_EQ(arm.trials[b].block, b);
  EXPECT_EQ(merged.context.settings.blocks, 4);
  EXPECT_EQ(arm.throughput_samples_per_s.n, 4u);
  EXPECT_DOUBLE_EQ(arm.throughput_samples_per_s.median, 101.5);
  EXPECT_FALSE(merged.suites[0].cases[0].comparisons.empty());  // 4 paired blocks: compared again
}

TEST(MergeBlocks, AFailureInAnyBlockFailsTheArm) {
  std::vector<Result> blocks{synthetic_run({.blocks = 1}), synthetic_run({.blocks = 1})};
  blocks[1].suites[0].cases[0].arms[1].status = tipbench::ArmStatus::failed;
  blocks[1].suites[0].cases[0].arms[1].reason = "boom";
  const Result merged = g::merge_blocks(blocks);
  EXPECT_EQ(merged.suites[0].cases[0].arms[1].status, tipbench::ArmStatus::failed);
  EXPECT_NE(merged.suites[0].cases[0].arms[1].reason.find("block 1: boom"), std::string::npos);
}

TEST(MergeBlocks, RefusesBlocksOfDifferentShape) {
  std::vector<Result> blocks{synthetic_run({.suites = {"a"}, .blocks = 1}),
                             synthetic_run({.suites = {"b"}, .blocks = 1})};
  EXPECT_THROW(g::merge_blocks(blocks), InputError);
  EXPECT_THROW(g::merge_blocks({}), InputError);
}

}  // namespace
