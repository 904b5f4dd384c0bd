// `tipbench history report` (tipbench/reports/history_dashboard.h): points capped per series with
// the newest kept in full and the change points' runs always drawn; the site opens from file:// in
// headless Chromium (Debian's `chromium`, installed by scripts/bootstrap.sh --test) with every
// shown chart drawn and no JavaScript error, and a screenshot is taken.
#include "tipbench/reports/history_dashboard.h"
#include "tipbench/reports/html_report.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "headless_chromium.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "test_paths.h"
#include "text_match.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;
namespace h = tipbench::history;
namespace r = tipbench::reports;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::synthetic_run;

TEST(HistoryDashboard, KeepsTheNewestRunsAndThinsTheOlder) {
  EXPECT_EQ(r::kept_points(5, 200).size(), 5u);
  const auto kept = r::kept_points(1000, 200);
  EXPECT_LE(kept.size(), 400u);
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept.back(), 999u);
  for (std::size_t i = 800; i < 1000; ++i) EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), i)) << i;
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
}

// 40 nightly runs of two suites: a 15% slowdown from run 30 on that came with a LibTorch upgrade,
// run 12 measured under load. Every arm counted its work: zero_grad's arms one more op a step from
// run 35 on.
std::string nightly_store(const fs::path& dir) {
  const auto store_path = (dir / "history.db").string();
  h::HistoryStore store(store_path);
  for (int i = 0; i < 40; ++i) {
    auto run = synthetic_run({.libtorch_version = i >= 30 ? "2.15.0" : "2.11.0",
                              .suites = {"zero_grad", "channels_last"},
                              .cv = 0.01,
                              .factor = i >= 30 ? 0.85 : (i == 12 ? 0.7 : 1.0),
                              .seed = static_cast<std::uint64_t>(i),
                              .timestamp = i < 31 ? fmt::format("2026-10-{:02}T03:00:00Z", i + 1)
                                                  : fmt::format("2026-11-{:02}T03:00:00Z", i - 30)});
    run.context.git.sha = fmt::format("{:040x}", 0xabc000 + i);
    if (i == 12) {
      run.context.conditions = tipbench::testing::measured_conditions(0.6, 60);
    }
    for (auto& s : run.suites) {
      tipbench::StepCounts counts;
      counts.steps = 2;
      counts.ops_per_step = s.name == "zero_grad" && i >= 35 ? 41 : 40;
      counts.top_level_ops_per_step = 20;
      counts.allocations_per_step = 145;
      counts.allocated_bytes_per_step = 145'000;
      for (auto& c : s.cases)
        for (auto& a : c.arms) a.trials.front().counts = counts;
    }
    const auto file = (dir / fmt::format("run{:02}.json", i)).string();
    tipbench::write_result_atomically(run, file);
    store.ingest(file);
  }
  return store_path;
}

TEST(HistoryDashboard, DrawsInHeadlessChromiumWithoutJavaScriptErrors) {
  const std::string chromium = tipbench::testing::find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/bootstrap.sh --test installs it)";
  if (::access(r::default_chartjs_path().c_str(), R_OK) != 0) GTEST_SKIP() << "libjs-chart.js is not installed";
  const auto dir = fresh_scratch_dir("history_dashboard");
  const auto store = nightly_store(dir);
  const auto site = dir / "site";
  // Annotations drawn: run 21 excluded from every series, the upgrade at run 31 expected for channels_last.
  h::HistoryStore(store).annotate(h::kExcludeRun, 21, {}, "runner swapped");
  std::vector<std::int64_t> channels_last;
  for (const auto& s : h::HistoryStore(store).series()) {
    if (s.suite == "channels_last") channels_last.push_back(s.id);
  }
  h::HistoryStore(store).annotate(h::kExpectedChange, 31, channels_last, "LibTorch 2.15 upgrade, accepted");
  const auto made = tipbench::testing::run_child(
      {TIPBENCH_BINARY, "history", "--store", store, "report", "--out", site.string(), "--series", "throughput"},
      dir / "report.out", dir / "report.err");
  ASSERT_EQ(made.code, 0) << made.out << made.err;
  EXPECT_TRUE(contains(made.out, "4 series")) << made.out;  // 2 suites x 2 arms, throughput
  for (const char* file : {"index.html", "chart.min.js", "series-index.js", "series/0.js", "series/3.js"}) {
    EXPECT_TRUE(fs::exists(site / file)) << file;
  }

  auto common = tipbench::testing::chromium_args(chromium, dir / "profile", "1200,1600");
  // The series files load by <script> after the page: give the virtual clock time to run them.
  common.insert(common.end(), {"--allow-file-access-from-files", "--virtual-time-budget=10000"});
  const std::string page = "file://" + (site / "index.html").string();
  auto dump = common;
  dump.insert(dump.end(), {"--dump-dom", page});
  const auto dom = tipbench::testing::run_child(dump, dir / "dom.html", "").out;
  EXPECT_TRUE(contains(dom, "data-ready=\"1\"")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "data-charts-expected=\"4\"")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "data-charts-drawn=\"4\"")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "data-js-errors=\"0\"")) << dom.substr(0, 3000);
  EXPECT_TRUE(contains(dom, "2 new regression(s)")) << dom.substr(0, 3000);  // channels_last's are expected
  EXPECT_TRUE(contains(dom, "<option value=\"torch 2.15.0\">")) << dom.substr(0, 3000);

  auto shot = common;
  const auto png = dir / "dashboard.png";
  shot.insert(shot.end(), {"--screenshot=" + png.string(), page});
  ASSERT_EQ(tipbench::testing::run_child(shot, dir / "shot.log", "").code, 0);
  const std::string bytes = tipbench::testing::read_bytes(png);
  ASSERT_GT(bytes.size(), 20000u);  // charts, not a blank page
  EXPECT_EQ(bytes.substr(1, 3), "PNG");

  // Counted work beside the times: each arm's ops per step is a series of its own, drawn, its step
  // at run 35 marked (zero_grad's two arms), one point a run.
  const auto counted_site = dir / "counted";
  const auto counted = tipbench::testing::run_child({TIPBENCH_BINARY, "history", "--store", store, "report", "--out",
                                                     counted_site.string(), "--series", " ops_per_step"},
                                                    dir / "counted.out", dir / "counted.err");
  ASSERT_EQ(counted.code, 0) << counted.out << counted.err;
  EXPECT_TRUE(contains(counted.out, "4 series")) << counted.out;  // 2 suites x 2 arms, ops_per_step
  auto counted_dump = common;
  counted_dump.insert(counted_dump.end(), {"--dump-dom", "file://" + (counted_site / "index.html").string()});
  const auto counted_dom = tipbench::testing::run_child(counted_dump, dir / "counted-dom.html", "").out;
  EXPECT_TRUE(contains(counted_dom, "data-charts-drawn=\"4\"")) << counted_dom.substr(0, 3000);
  EXPECT_TRUE(contains(counted_dom, "data-js-errors=\"0\"")) << counted_dom.substr(0, 3000);
  EXPECT_TRUE(contains(counted_dom, "2 new regression(s)")) << counted_dom.substr(0, 3000);
}

}  // namespace
