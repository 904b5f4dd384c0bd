// `history detect` over a real store (tipbench/history/detect.h): a planted slowdown that came
// with a LibTorch upgrade is found in the one series the two stacks share, named as a regression
// with the software change; a run measured under load is flagged, not cut at; --since decides
// what is new.
#include "tipbench/history/detect.h"
#include "tipbench/history/trends.h"
#include "tipbench/results/result.h"

#include "scratch_dir.h"
#include "synthetic.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace {

namespace h = tipbench::history;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::synthetic_run;

// 30 nightly runs of one binary: runs 20.. are 10% slower and built on LibTorch 2.15.0; run 8 was
// measured while other processes took 60% of the CPUs and is 30% slower.
std::string nightly_store(const std::string& name) {
  const auto dir = fresh_scratch_dir(name);
  const auto store_path = (dir / "history.db").string();
  h::HistoryStore store(store_path);
  for (int i = 0; i < 30; ++i) {
    auto run = synthetic_run({.libtorch_version = i >= 20 ? "2.15.0" : "2.11.0",
                              .cv = 0.01,
                              .factor = i >= 20 ? 0.9 : (i == 8 ? 0.7 : 1.0),
                              .seed = static_cast<std::uint64_t>(100 + i),
                              .timestamp = fmt::format("2026-11-{:02}T03:00:00Z", i + 1)});
    run.context.git.sha = fmt::format("{:040}", i);
    if (i == 8) {
      run.context.conditions = tipbench::testing::measured_conditions(0.6, 60);
    }
    const auto file = (dir / fmt::format("run{:02}.json", i)).string();
    tipbench::write_result_atomically(run, file);
    store.ingest(file);
  }
  return store_path;
}

TEST(HistoryDetect, FindsTheSlowdownThatCameWithTheStackUpgrade) {
  const h::HistoryStore store(nightly_store("detect_upgrade"));
  h::DetectRequest request;
  request.filter = "throughput";
  const auto report = h::detect(store, request);
  EXPECT_EQ(report.series, 2u);   // base and treat arms: one series each across both LibTorch versions
  EXPECT_EQ(report.flagged, 2u);  // run 8, in each series
  EXPECT_EQ(report.runs, 2u * 29);
  ASSERT_EQ(report.changes.size(), 2u) << h::detect_console(report);
  for (const auto& c : report.changes) {
    EXPECT_TRUE(c.regression);
    EXPECT_TRUE(c.is_new);
    EXPECT_EQ(c.metric, "throughput_samples_per_s");
    EXPECT_EQ(c.hardware, "cpu-test-2c");
    EXPECT_NEAR(c.point.ratio, 0.9, 0.01);
    EXPECT_EQ(c.after_time, "2026-11-21T03:00:00Z");
    EXPECT_EQ(c.before_git, fmt::format("{:040}", 19));
    EXPECT_EQ(c.after_git, fmt::format("{:040}", 20));
    EXPECT_EQ(c.software_change, "libtorch_version 2.11.0 -> 2.15.0");
  }
  EXPECT_EQ(report.new_regressions(), 2u);
  const auto markdown = h::detect_markdown(report);
  EXPECT_NE(markdown.find("| REGRESSION | zero_grad/model:m0/batch:8/arm:base | throughput_samples_per_s"),
            std::string::npos)
      << markdown;
  const auto json = h::detect_json(report);
  EXPECT_EQ(json.at("new_regressions"), 2);
  EXPECT_EQ(json.at("changes").at(0).at("software_change"), "libtorch_version 2.11.0 -> 2.15.0");

  // Seen before: a --since after the change makes it old news (exit 0 in the CLI).
  request.since = "2026-11-25";
  const auto later = h::detect(store, request);
  EXPECT_EQ(later.changes.size(), 2u);
  EXPECT_EQ(later.new_regressions(), 0u);
}

// An expected-change annotation at the first upgraded run turns the regression into `expected`
// (no new regression); excluding a run leaves it out of every series, counted.
TEST(HistoryDetect, AnnotationsMarkAnExpectedChangeAndExcludeARun) {
  h::HistoryStore store(nightly_store("detect_annotations"));
  h::DetectRequest request;
  request.filter = "throughput";
  store.annotate(h::kExpectedChange, 21, {}, "LibTorch 2.15 upgrade");  // run ids follow the ingest order
  store.annotate(h::kExcludeRun, 26, {}, "runner swapped");
  const auto report = h::detect(store, request);
  EXPECT_EQ(report.excluded, 2u);  // run 26, in each series
  EXPECT_EQ(report.runs, 2u * 28);
  ASSERT_EQ(report.changes.size(), 2u) << h::detect_console(report);
  for (const auto& c : report.changes) {
    EXPECT_EQ(c.expected, "LibTorch 2.15 upgrade");
    EXPECT_EQ(h::verdict_of(c), "expected");
  }
  EXPECT_EQ(report.new_regressions(), 0u);
  EXPECT_NE(h::detect_console(report).find("annotated: LibTorch 2.15 upgrade"), std::string::npos);
  EXPECT_NE(h::detect_console(report).find("2 excluded by annotation"), std::string::npos);

  // The security review's trigger: a note that would break the job summary's table and render a
  // link, an image and a mention. Escaped, it is one cell of text.
  for (const auto& a : store.annotations()) store.remove_annotation(a.id);
  store.annotate(h::kExpectedChange, 21, {}, "ok | [x](https://e.vil)\n<img src=x> @team");
  const auto markdown = h::detect_markdown(h::detect(store, request));
  EXPECT_NE(markdown.find("| ok \\| \\[x\\](https://e.vil) &lt;img src=x&gt; @&#8203;team |"), std::string::npos)
      << markdown;
  EXPECT_EQ(markdown.find("<img"), std::string::npos) << markdown;

  // An expected change at a run that is not at the change (run 5) explains nothing.
  for (const auto& a : store.annotations()) store.remove_annotation(a.id);
  store.annotate(h::kExpectedChange, 5, {}, "unrelated");
  EXPECT_EQ(h::detect(store, request).new_regressions(), 2u);
}

// Counted work in the store: one series per arm and count metric, one sample per run. A step in a
// count is found at the first run after it, with no window and no statistics, and a run measured
// under load is not left out (a count does not depend on the load).
TEST(HistoryDetect, ACountStepIsFoundAtTheFirstRunAfterIt) {
  const auto dir = fresh_scratch_dir("detect_counts");
  const auto store_path = (dir / "history.db").string();
  {
    h::HistoryStore store(store_path);
    for (int i = 0; i < 6; ++i) {
      auto run = synthetic_run(
          {.seed = static_cast<std::uint64_t>(200 + i), .timestamp = fmt::format("2026-11-{:02}T03:00:00Z", i + 1)});
      run.context.git.sha = fmt::format("{:040}", i);
      if (i == 2) run.context.conditions = tipbench::testing::measured_conditions(0.6, 60);
      tipbench::StepCounts counts;
      counts.steps = 2;
      const double adds = i >= 4 ? 50 : 36;  // run 4 adds 14 aten::add_ a step
      counts.ops = {{"aten::add_", adds, 0}, {"aten::mkldnn_convolution", 4, 0}};
      counts.ops_per_step = adds + 4;
      counts.top_level_ops_per_step = adds;
      counts.allocations_per_step = 145;
      counts.allocated_bytes_per_step = 145'000;
      for (auto& s : run.suites)
        for (auto& c : s.cases)
          for (auto& a : c.arms) a.trials.front().counts = counts;
      const auto file = (dir / fmt::format("run{}.json", i)).string();
      tipbench::write_result_atomically(run, file);
      store.ingest(file);
    }
  }
  const h::HistoryStore store(store_path);
  h::DetectRequest request;
  request.filter = "ops_per_step";
  const auto report = h::detect(store, request);
  EXPECT_EQ(report.series, 2u) << "ops_per_step of the two arms (top_level_ops_per_step is stored, not judged)";
  EXPECT_EQ(report.flagged, 0u) << "the loaded run 2 counts";
  EXPECT_EQ(report.runs, 2u * 6);
  ASSERT_EQ(report.changes.size(), 2u) << h::detect_console(report);
  for (const auto& c : report.changes) {
    EXPECT_TRUE(c.regression) << "more work";
    EXPECT_EQ(c.after_time, "2026-11-05T03:00:00Z") << "the first run after the step";
    EXPECT_EQ(c.point.mean_before, 40);
    EXPECT_EQ(c.point.mean_after, 54);
    EXPECT_EQ(c.point.n_before, 4u);
    EXPECT_EQ(c.point.n_after, 2u);
  }
  EXPECT_NE(h::detect_console(report).find("40 -> 54 per step (exact count)"), std::string::npos)
      << h::detect_console(report);
  EXPECT_NE(h::detect_markdown(report).find("40 → 54 per step | exact"), std::string::npos)
      << h::detect_markdown(report);
  request.filter = "allocations_per_step";
  EXPECT_TRUE(h::detect(store, request).changes.empty()) << "an unchanged count has no step";
}

// The count rule alone: any change for an exact metric, none within a tolerance, a count that
// appears from zero (a new host sync) is a step too.
TEST(HistoryDetect, CountSeriesStepByTheirTolerance) {
  auto steps = h::judge_count_series({40, 40, 41, 41, 40}, 0);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].point.index, 2u);
  EXPECT_TRUE(steps[0].regression);
  EXPECT_EQ(steps[1].point.index, 4u);
  EXPECT_FALSE(steps[1].regression) << "less work";
  EXPECT_TRUE(h::judge_count_series({1000, 1001, 999}, 0.002).empty()) << "within 0.2%";
  steps = h::judge_count_series({0, 0, 1}, 0);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_DOUBLE_EQ(steps[0].point.ratio, 2) << "from 0: 1 + the new count";
  EXPECT_TRUE(h::judge_count_series({}, 0).empty());
}

TEST(HistoryDetect, HardwareOfSlug) {
  EXPECT_EQ(h::hardware_of_slug("nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(h::hardware_of_slug("cpu-test-2c_torch2.11.0"), "cpu-test-2c");
  EXPECT_EQ(h::hardware_of_slug("plain"), "plain");
}

}  // namespace
