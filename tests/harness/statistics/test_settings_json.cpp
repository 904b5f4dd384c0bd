// MeasureSettings' JSON form: every field round-trips, and the quick preset is smaller.
#include "tipbench/common/atomic_file.h"
#include "tipbench/common/progress.h"
#include "tipbench/results/result.h"
#include "tipbench/common/json_number.h"
#include "tipbench/statistics/settings.h"
#include "tipbench/results/summary.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <random>
#include <regex>
#include <string>
#include <vector>
#include "sample_result.h"

namespace {

using tipbench::MeasureSettings;
using tipbench::testing::expect_throw_containing;
using tipbench::testing::sample_result;

// ---------------------------------------------------------------------------------------------
// MeasureSettings

MeasureSettings unusual_settings() {
  MeasureSettings s;
  s.warmup_min_steps = 3;
  s.warmup_max_steps = 77;
  s.warmup_max_s = 12.5;
  s.warmup_window = 4;
  s.warmup_tolerance = 0.031;
  s.trial_min_steps = 11;
  s.trial_min_time_s = 0.75;
  s.trial_max_steps = 999;
  s.keep_workloads = false;
  s.min_blocks = 4;
  s.blocks = 13;
  s.precision = 0.0125;
  s.time_budget_s = 912.5;
  s.practical_threshold = 0.035;
  s.bootstrap_resamples = 4321;
  s.seed = std::numeric_limits<std::uint64_t>::max() - 5;  // beyond int64
  s.inject_slowdown_pct = 7.5;
  s.profile_dir = "traces/run 1";
  s.profile_steps = 3;
  s.inject_slowdown_op = "aten::addmm";
  s.explain_steps = 4;
  s.count_steps = 5;
  s.instructions = "callgrind";
  s.inject_extra_ops = 12;
  return s;
}

void expect_same_settings(const MeasureSettings& a, const MeasureSettings& b) {
  EXPECT_EQ(a.warmup_min_steps, b.warmup_min_steps);
  EXPECT_EQ(a.warmup_max_steps, b.warmup_max_steps);
  EXPECT_EQ(a.warmup_max_s, b.warmup_max_s);
  EXPECT_EQ(a.warmup_window, b.warmup_window);
  EXPECT_EQ(a.warmup_tolerance, b.warmup_tolerance);
  EXPECT_EQ(a.trial_min_steps, b.trial_min_steps);
  EXPECT_EQ(a.trial_min_time_s, b.trial_min_time_s);
  EXPECT_EQ(a.trial_max_steps, b.trial_max_steps);
  EXPECT_EQ(a.keep_workloads, b.keep_workloads);
  EXPECT_EQ(a.min_blocks, b.min_blocks);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.time_budget_s, b.time_budget_s);
  EXPECT_EQ(a.practical_threshold, b.practical_threshold);
  EXPECT_EQ(a.bootstrap_resamples, b.bootstrap_resamples);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.inject_slowdown_pct, b.inject_slowdown_pct);
  EXPECT_EQ(a.profile_dir, b.profile_dir);
  EXPECT_EQ(a.profile_steps, b.profile_steps);
  EXPECT_EQ(a.inject_slowdown_op, b.inject_slowdown_op);
  EXPECT_EQ(a.explain_steps, b.explain_steps);
  EXPECT_EQ(a.count_steps, b.count_steps);
  EXPECT_EQ(a.instructions, b.instructions);
  EXPECT_EQ(a.inject_extra_ops, b.inject_extra_ops);
}

TEST(MeasureSettingsJson, RoundTripsEveryField) {
  const MeasureSettings s = unusual_settings();
  const nlohmann::json j = s;
  EXPECT_EQ(j.size(), 24u);
  const auto back = j.get<MeasureSettings>();
  expect_same_settings(back, s);
  // Through text too, as it travels in a result file.
  expect_same_settings(nlohmann::json::parse(j.dump()).get<MeasureSettings>(), s);
}

TEST(MeasureSettingsJson, KeysCarryTheirUnits) {
  const nlohmann::json j = MeasureSettings{};
  EXPECT_TRUE(j.contains("warmup_max_s"));
  EXPECT_TRUE(j.contains("trial_min_time_s"));
  EXPECT_TRUE(j.contains("blocks"));
  EXPECT_TRUE(j.contains("practical_threshold"));
}

TEST(MeasureSettingsJson, MissingKeysKeepTheirDefaults) {
  const auto s = nlohmann::json{{"blocks", 3}}.get<MeasureSettings>();
  MeasureSettings expected;
  expected.blocks = 3;
  expect_same_settings(s, expected);
  expect_same_settings(nlohmann::json::object().get<MeasureSettings>(), MeasureSettings{});
}

TEST(MeasureSettingsJson, UnknownKeyIsAnError) {
  nlohmann::json j = unusual_settings();
  j["blocks_per_second"] = 1;
  expect_throw_containing<std::invalid_argument>([&] { (void)j.get<MeasureSettings>(); }, {"blocks_per_second"});
}

// The instruction counter's mode and the extra-ops knob are checked as they enter.
TEST(MeasureSettingsJson, AnUnknownInstructionModeOrANegativeKnobIsAnError) {
  nlohmann::json j = unusual_settings();
  j["instructions"] = "rdtsc";
  expect_throw_containing<std::invalid_argument>([&] { (void)j.get<MeasureSettings>(); }, {"instructions"});
  j = unusual_settings();
  j["inject_extra_ops"] = -1;
  expect_throw_containing<std::invalid_argument>([&] { (void)j.get<MeasureSettings>(); }, {"inject_extra_ops"});
}

TEST(MeasureSettingsJson, NonObjectAndWrongTypesAreErrors) {
  EXPECT_THROW((void)nlohmann::json::array().get<MeasureSettings>(), std::exception);
  EXPECT_THROW((void)nlohmann::json({{"blocks", "ten"}}).get<MeasureSettings>(), std::exception);
}

TEST(MeasureSettingsJson, QuickPresetIsSmallerThanTheDefault) {
  const MeasureSettings d;
  const MeasureSettings q = tipbench::quick_settings();
  EXPECT_LT(q.trial_min_time_s, d.trial_min_time_s);
  EXPECT_LE(q.blocks, d.blocks);
  EXPECT_GE(q.blocks, 3);
  EXPECT_EQ(q.practical_threshold, d.practical_threshold);
  EXPECT_DOUBLE_EQ(tipbench::noisy_cv_limit(d), d.practical_threshold / 2);
}

}  // namespace
