// The reporters of compare/gate/report without a browser: escaping (HTML, <script> JSON,
// Markdown), which charts the HTML model draws from which encodings, that hostile strings from a
// result never reach the page unescaped, the Google Benchmark JSON shape tools/compare.py reads,
// and the Markdown tables (worst first, fingerprints and injected runs marked).
#include "tipbench/reports/format.h"
#include "tipbench/reports/comparison_report.h"
#include "tipbench/reports/console.h"
#include "tipbench/common/escape.h"
#include "tipbench/reports/gate_report.h"
#include "tipbench/reports/gbench.h"
#include "tipbench/reports/html_report.h"
#include "tipbench/reports/run_set.h"

#include "child_process.h"
#include "headless_chromium.h"
#include "tipbench/common/sha256.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "text_match.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

using tipbench::Result;
using tipbench::reports::NamedRun;
using tipbench::testing::contains;
using tipbench::testing::synthetic_run;
namespace r = tipbench::reports;

std::vector<std::string> chart_kinds(const nlohmann::json& model) {
  std::vector<std::string> kinds;
  for (const auto& c : model.at("charts"))
    kinds.push_back(c.at("id").get<std::string>().substr(0, c.at("id").get<std::string>().find('-')));
  return kinds;
}

// A case whose arms cover workers x pin_memory (the dataloader suite's encoding).
tipbench::CaseResult grid_case() {
  auto run = synthetic_run({.blocks = 4, .cv = 0.01});
  tipbench::CaseResult c = run.suites[0].cases[0];
  c.name = "dataloader/mode:train/model:m/batch:8";
  std::vector<tipbench::ArmResult> arms;
  for (const std::string pin : {"false", "true"}) {
    for (const std::string w : {"0", "1", "2"}) {
      auto a = c.arms[0];
      a.arm = "w" + w + (pin == "true" ? "_pin" : "");
      a.name = c.name + "/arm:" + a.arm;
      a.baseline = arms.empty();
      a.levels = {{"workers", w}, {"pin_memory", pin}};
      if (pin == "true") {
        a.status = tipbench::ArmStatus::skipped;
        a.reason = "pin_memory needs CUDA";
        a.trials.clear();
      }
      arms.push_back(a);
    }
  }
  c.arms = arms;
  c.comparisons.clear();
  return c;
}

// The dataloader's pipeline ladder in loader-only mode: three rungs and the model's consumption.
tipbench::CaseResult ladder_case() {
  auto run = synthetic_run({.blocks = 4, .cv = 0.01});
  tipbench::CaseResult c = run.suites[0].cases[0];
  c.name = "dataloader/mode:loader_only/model:m/batch:8/pipeline:ladder";
  c.params = {{"mode", "loader_only"}, {"model", "m"}, {"batch", "8"}, {"pipeline", "ladder"}};
  std::vector<tipbench::ArmResult> arms;
  for (const std::string rung : {"host_float", "uint8", "uint8_cache", "synthetic"}) {
    auto a = c.arms[0];
    a.arm = rung;
    a.name = c.name + "/arm:" + rung;
    a.baseline = arms.empty();
    a.levels = {{"rung", rung}};
    arms.push_back(a);
  }
  arms[1].status = tipbench::ArmStatus::failed;  // drawn as a gap with its status
  arms[1].trials.clear();
  c.arms = arms;
  c.comparisons.clear();
  return c;
}

// An arm per value of `level` (batch sweep, world size) or per checkpoint policy.
tipbench::CaseResult level_case(const std::string& suite, const std::string& level, std::vector<std::string> values) {
  auto run = synthetic_run({.blocks = 4, .cv = 0.01});
  tipbench::CaseResult c = run.suites[0].cases[0];
  c.name = suite + "/model:m";
  std::vector<tipbench::ArmResult> arms;
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto a = c.arms[0];
    a.arm = level + values[i];
    a.name = c.name + "/arm:" + a.arm;
    a.baseline = i == 0;
    a.levels = {{level, values[i]}};
    a.throughput_samples_per_s.median = 100.0 * static_cast<double>(i + 1);
    a.peak_memory_bytes = static_cast<std::int64_t>(i + 1) << 24;
    a.step_time_ms.median = 10.0 + static_cast<double>(i);
    arms.push_back(a);
  }
  c.arms = arms;
  c.comparisons.clear();
  return c;
}

TEST(Escape, HtmlEscapesTheFiveCharacters) {
  EXPECT_EQ(tipbench::html_escape(R"(<a href="x">'&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(Escape, ScriptJsonCannotCloseTheScriptOrBreakALine) {
  const nlohmann::json j = {{"s", "</script><!-- & \xE2\x80\xA8 \xE2\x80\xA9"}};
  const std::string out = tipbench::json_for_script(j);
  EXPECT_FALSE(contains(out, "</")) << out;
  EXPECT_FALSE(contains(out, "<!--")) << out;
  EXPECT_FALSE(contains(out, "&")) << out;
  EXPECT_FALSE(contains(out, "\xE2\x80\xA8")) << out;
  EXPECT_TRUE(contains(out, "\\u2028")) << out;
  EXPECT_EQ(nlohmann::json::parse(out), j);  // still the same JSON
}

TEST(Escape, MarkdownEscapesPipesNewlinesAndHtml) {
  EXPECT_EQ(tipbench::markdown_escape("a|b\n<c>"), "a\\|b &lt;c&gt;");
}

// The security review's trigger: an annotation note in detect --markdown's table (a job summary).
TEST(Escape, MarkdownStartsNoLinkCodeOrMention) {
  EXPECT_EQ(tipbench::markdown_escape("[x](https://e.vil) `c` *b* @team <img src=x>"),
            "\\[x\\](https://e.vil) \\`c\\` \\*b\\* @&#8203;team &lt;img src=x&gt;");
  EXPECT_EQ(tipbench::markdown_escape("a\\|b\r\x1b\u2028c"), "a\\\\\\|b c");
}

TEST(Escape, APythonCommentStaysOneLine) {
  EXPECT_EQ(tipbench::python_comment("cpu\nimport os; os.system('id')\n#"), "cpu import os; os.system('id') #");
  EXPECT_EQ(tipbench::python_comment("a\rb\u2028c\u0085d\x0c"
                                     "e"),
            "a b c d e");
}

TEST(Escape, AUrlPathStartsNoScheme) {
  EXPECT_EQ(tipbench::url_path("javascript:alert(document.domain)"), "javascript%3Aalert%28document.domain%29");
  EXPECT_EQ(tipbench::url_path("../traces/arm a.json"), "../traces/arm%20a.json");
  EXPECT_EQ(tipbench::url_path("x\"><script>"), "x%22%3E%3Cscript%3E");
}

TEST(HtmlModel, OneRunDrawsTheSpeedupChartOnly) {
  const auto model = r::report_model({{"run.json", synthetic_run({.cv = 0.01})}}, {}, {});
  EXPECT_EQ(chart_kinds(model), (std::vector<std::string>{"speedup"}));
  const auto& speedup = model.at("charts")[0];
  EXPECT_EQ(speedup.at("kind"), "bars_ci");
  EXPECT_EQ(speedup.at("labels").size(), 1u);  // one treatment vs its baseline
  const auto& d = speedup.at("datasets")[0];
  EXPECT_LE(d.at("low")[0].get<double>(), d.at("values")[0].get<double>());
  EXPECT_GE(d.at("high")[0].get<double>(), d.at("values")[0].get<double>());
}

TEST(HtmlModel, TwoRunsAddTheChangeAndTrendCharts) {
  const auto model =
      r::report_model({{"base.json", synthetic_run({.cv = 0.01, .seed = 1, .timestamp = "2026-01-01T00:00:00Z"})},
                       {"head.json", synthetic_run({.cv = 0.01, .factor = 0.9, .seed = 2})}},
                      {}, {.primary = 1});
  EXPECT_EQ(chart_kinds(model), (std::vector<std::string>{"speedup", "change", "trend"}));
  const auto& change = model.at("charts")[1];
  EXPECT_NEAR(change.at("datasets")[0].at("values")[0].get<double>(), -10.0, 2.0);  // percent
  const auto& trend = model.at("charts")[2];
  EXPECT_EQ(trend.at("x_labels").size(), 2u);
  EXPECT_TRUE(contains(trend.at("x_labels")[0].get<std::string>(), "2026-01-01"));  // sorted by time
}

TEST(HtmlModel, HistoryRunsFeedTheTrend) {
  std::vector<NamedRun> history;
  for (int i = 0; i < 4; ++i) {
    history.push_back(
        {"h" + std::to_string(i), synthetic_run({.seed = static_cast<std::uint64_t>(i),
                                                 .timestamp = "2026-01-0" + std::to_string(i + 1) + "T00:00:00Z"})});
  }
  const auto model = r::report_model({{"run.json", synthetic_run({})}}, history, {});
  const auto& trend = model.at("charts").back();
  EXPECT_EQ(trend.at("kind"), "trend");
  EXPECT_EQ(trend.at("x_labels").size(), 4u);
  EXPECT_EQ(trend.at("datasets").size(), 2u);  // both arms
}

TEST(HtmlModel, EncodingsOfOtherSuitesGetTheirCharts) {
  auto run = synthetic_run({.blocks = 4});
  run.suites.push_back({"dataloader", "d", "in_process", {grid_case()}, {}, {}});
  run.suites.push_back(
      {"batch_size", "b", "in_process", {level_case("batch_size", "batch", {"8", "16", "32"})}, {}, {}});
  run.suites.push_back(
      {"checkpointing", "c", "in_process", {level_case("checkpointing", "checkpoint", {"none", "all"})}, {}, {}});
  run.suites.push_back({"ddp", "p", "in_process", {level_case("ddp", "world_size", {"1", "2", "4"})}, {}, {}});
  const auto model = r::report_model({{"run.json", run}}, {}, {});
  EXPECT_EQ(chart_kinds(model), (std::vector<std::string>{"speedup", "heatmap", "batch", "tradeoff", "world_size"}));
  const auto& heat = model.at("charts")[1];
  EXPECT_EQ(heat.at("x"), (nlohmann::json{"0", "1", "2"}));
  EXPECT_EQ(heat.at("y"), (nlohmann::json{"false", "true"}));
  EXPECT_TRUE(heat.at("cells")[3].at("value").is_null());  // skipped: drawn as a gap, not a number
  const auto& batch = model.at("charts")[2];
  EXPECT_EQ(batch.at("datasets").size(), 2u);  // throughput and memory
  EXPECT_EQ(batch.at("datasets")[0].at("points")[2].at("x"), 32.0);
  const auto& scaling = model.at("charts")[4];
  EXPECT_EQ(scaling.at("datasets")[1].at("label"), "ideal linear scaling");
  EXPECT_DOUBLE_EQ(scaling.at("datasets")[1].at("points")[2].at("y").get<double>(), 400.0);
}

TEST(HtmlModel, APipelineLadderDrawsItsRungsAndTheModelsConsumption) {
  auto run = synthetic_run({.blocks = 4});
  run.suites.push_back({"dataloader", "d", "in_process", {ladder_case()}, {}, {}});
  const auto model = r::report_model({{"run.json", run}}, {}, {});
  EXPECT_EQ(chart_kinds(model), (std::vector<std::string>{"speedup", "ladder"}));
  const auto& ladder = model.at("charts")[1];
  EXPECT_EQ(ladder.at("kind"), "ladder");
  EXPECT_EQ(ladder.at("labels"), (nlohmann::json{"host_float", "uint8 (failed)", "uint8_cache"}));
  EXPECT_TRUE(ladder.at("values")[1].is_null());
  const auto& synthetic = run.suites.back().cases[0].arms[3];
  EXPECT_DOUBLE_EQ(ladder.at("consumption").get<double>(), synthetic.throughput_samples_per_s.median);
  EXPECT_DOUBLE_EQ(ladder.at("values")[0].get<double>(),
                   run.suites.back().cases[0].arms[0].throughput_samples_per_s.median);
}

// A result since schema 1.4 records each suite's declared chart: the report draws that one only,
// whatever levels the arms carry (alignment's aligned/unaligned `batch` is no sweep).
TEST(HtmlModel, ASuiteGetsTheChartItsResultRecords) {
  auto run = synthetic_run({.blocks = 4});
  const auto suite = [](const std::string& name, tipbench::CaseResult c, tipbench::ChartKind chart) {
    tipbench::SuiteResult s{name, "d", "in_process", {std::move(c)}, {}, {}};
    s.chart = chart;
    return s;
  };
  run.suites.push_back(suite("alignment", level_case("alignment", "batch", {"63", "64"}), tipbench::ChartKind::none));
  run.suites.push_back(
      suite("batch_size", level_case("batch_size", "batch", {"8", "16"}), tipbench::ChartKind::batch_curves));
  run.suites.push_back(suite("checkpointing", level_case("checkpointing", "checkpoint", {"none", "all"}),
                             tipbench::ChartKind::batch_curves));
  const auto model = r::report_model({{"run.json", run}}, {}, {});
  EXPECT_EQ(chart_kinds(model), (std::vector<std::string>{"speedup", "batch"}));
  EXPECT_TRUE(contains(model.at("charts")[1].at("id").get<std::string>(), "batch_size/")) << model.at("charts")[1];
}

TEST(HtmlPage, EveryStringFromAResultIsEscaped) {
  const std::string evil = "</script><script>alert(1)</script><img src=x onerror=alert(2)>";
  auto run = synthetic_run({});
  run.suites[0].description = evil;
  run.suites[0].cases[0].arms[1].arm = evil;
  run.context.fingerprint_slug = evil;
  run.context.warnings = {evil};
  const std::vector<NamedRun> runs{{evil, run}};
  const std::string html = r::render_html(r::report_model(runs, {}, {.title = evil}), runs, "/* Chart */");
  EXPECT_FALSE(contains(html, "<script>alert")) << "raw script injected";
  EXPECT_FALSE(contains(html, "<img src=x")) << "raw element injected";
  EXPECT_TRUE(contains(html, "&lt;/script&gt;&lt;script&gt;alert(1)"));
  // Exactly our three script elements (model, Chart.js, page script).
  std::size_t scripts = 0;
  for (auto at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 3u);
  EXPECT_TRUE(contains(html, "Content-Security-Policy"));
  EXPECT_FALSE(contains(html, "http://"));  // nothing loaded from a network: opens offline
  EXPECT_FALSE(contains(html, "https://"));
}

TEST(HtmlPage, ChartJsIsReadFromTheDebianPackageOrAClearError) {
  try {
    (void)r::read_chartjs("/nonexistent/chart.min.js");
    ADD_FAILURE() << "no error";
  } catch (const tipbench::InputError& e) {
    EXPECT_TRUE(contains(e.what(), "libjs-chart.js")) << e.what();
  }
}

// The device bundle carries its own Chart.js and names it in TIPBENCH_CHARTJS.
TEST(HtmlPage, DefaultChartJsPathIsTheEnvironmentsThenDebians) {
  const char* before = std::getenv("TIPBENCH_CHARTJS");
  const std::string saved = before ? before : "";
  ::setenv("TIPBENCH_CHARTJS", "/bundle/share/chart.min.js", 1);
  EXPECT_EQ(r::default_chartjs_path(), "/bundle/share/chart.min.js");
  ::setenv("TIPBENCH_CHARTJS", "", 1);
  EXPECT_EQ(r::default_chartjs_path(), r::kDefaultChartJs);
  ::unsetenv("TIPBENCH_CHARTJS");
  EXPECT_EQ(r::default_chartjs_path(), r::kDefaultChartJs);
  if (before) ::setenv("TIPBENCH_CHARTJS", saved.c_str(), 1);
}

TEST(Gbench, OneRepetitionPerTrialAndAMedianAggregate) {
  auto run = synthetic_run({.blocks = 5});
  run.suites[0].cases[0].arms[1].status = tipbench::ArmStatus::skipped;
  const auto j = r::to_gbench_json(run);
  ASSERT_TRUE(j.contains("context"));
  EXPECT_TRUE(j.at("context").contains("date"));
  EXPECT_TRUE(j.at("context").contains("library_build_type"));
  const auto& b = j.at("benchmarks");
  ASSERT_EQ(b.size(), 6u);  // the ok arm: 5 repetitions + 1 aggregate; the skipped arm is left out
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(b[i].at("run_type"), "iteration");
    EXPECT_EQ(b[i].at("repetitions"), 5);
    EXPECT_EQ(b[i].at("repetition_index"), i);
    EXPECT_EQ(b[i].at("time_unit"), "ms");
    EXPECT_GT(b[i].at("real_time").get<double>(), 0);
    EXPECT_EQ(b[i].at("real_time"), b[i].at("cpu_time"));
    EXPECT_EQ(b[i].at("name"), run.suites[0].cases[0].arms[0].name);
  }
  EXPECT_EQ(b[5].at("run_type"), "aggregate");
  EXPECT_EQ(b[5].at("aggregate_name"), "median");
  EXPECT_EQ(j.at("context").at("tipbench_not_run").size(), 1u);
}

TEST(Markdown, ComparisonListsTheWorstChangeFirstAndMarksOtherHardware) {
  auto head = synthetic_run({.cpu_model = "Other CPU", .cv = 0.005, .seed = 2});
  for (auto& t : head.suites[0].cases[0].arms[1].trials) t.throughput_samples_per_s *= 0.8;
  const std::vector<NamedRun> runs{{"base.json", synthetic_run({.cv = 0.005, .seed = 1})}, {"head.json", head}};
  const std::string md = r::comparison_markdown(runs, {.practical_threshold = 0.03});
  EXPECT_TRUE(contains(md, "different fingerprint than A")) << md;
  EXPECT_TRUE(contains(md, "cpu_model")) << md;
  const auto first_row = md.find("| zero_grad/");
  ASSERT_NE(first_row, std::string::npos) << md;
  EXPECT_TRUE(contains(md.substr(first_row, md.find('\n', first_row) - first_row), "arm:treat")) << md;
  EXPECT_TRUE(contains(md, "**slower**")) << md;
}

// What print_run_summary writes, as a string.
std::string console_text(const Result& result) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buffer, &size);
  r::print_run_summary(result, out);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The run ends with its answer: after every case's table, one findings row per treatment (the
// report's Findings rows), grouped by suite (its name on the group's first row), then the noise line.
TEST(RunConsole, TheRunEndsWithItsFindings) {
  const auto run = synthetic_run({.suites = {"zero_grad", "channels_last"}, .cases_per_suite = 2, .cv = 0.10});
  const std::string text = console_text(run);
  const auto findings = text.find("\nfindings: 4 comparison(s)");
  ASSERT_NE(findings, std::string::npos) << text;
  EXPECT_GT(findings, text.rfind("peak mem")) << "after the last case's table";
  EXPECT_LT(findings, text.find("\nnoise: ")) << "before the noise line";
  const std::string table = text.substr(findings);
  EXPECT_EQ(count_of(table, "treat vs base"), 4u) << table;
  EXPECT_EQ(count_of(table, "\n  zero_grad "), 1u) << "the suite's name once, on its first row: " << table;
  EXPECT_EQ(count_of(table, "\n  channels_last "), 1u) << table;
  const auto& cmp = *tipbench::find_comparison(run.suites[0].cases[0], "treat");
  EXPECT_TRUE(contains(table, r::ratio_with_ci(cmp) + "  " + r::verdict_label(cmp))) << table;
  EXPECT_TRUE(contains(table, "[noisy]")) << table;
  EXPECT_FALSE(contains(console_text(synthetic_run({.blocks = 1})), "findings:")) << "no comparison, no table";
}

// Fewer than three blocks per arm (`run --max-blocks 1`, `--blocks 2`) give no comparison: the case
// says why instead of printing nothing; with three blocks it compares and says nothing of the kind.
TEST(RunConsole, ACaseWithOneBlockSaysWhyItHasNoComparison) {
  const auto one = synthetic_run({.blocks = 1});
  ASSERT_TRUE(one.suites[0].cases[0].comparisons.empty());
  const std::string text = console_text(one);
  EXPECT_EQ(count_of(text, "no comparison: 1 block per arm"), one.suites[0].cases.size()) << text;
  EXPECT_TRUE(contains(text, "a comparison needs at least 3")) << text;
  EXPECT_TRUE(contains(text, "--blocks or --max-blocks 3 or more")) << text;
  EXPECT_TRUE(contains(console_text(synthetic_run({.blocks = 2})), "no comparison: 2 blocks per arm"));
  EXPECT_FALSE(contains(console_text(synthetic_run({.blocks = 3})), "no comparison")) << "three blocks compare";
}

// A noisy run (CV 10%, far above the 1% limit of a 2% threshold) has three noisy rows per case
// (throughput, cpu time, memory is steady): the console says so once per case and once at the end.
TEST(RunConsole, OneNoiseLinePerCaseAndOneFooter) {
  const auto noisy = synthetic_run({.cases_per_suite = 2, .cv = 0.10, .cpu_time = true});
  std::size_t noisy_rows = 0;
  for (const auto& c : noisy.suites[0].cases) {
    for (const auto& cmp : c.comparisons) noisy_rows += cmp.noisy ? 1 : 0;
  }
  ASSERT_GE(noisy_rows, 2u);  // more rows than cases: one line each would repeat itself
  const std::string text = console_text(noisy);
  EXPECT_EQ(count_of(text, "    noise: between-block CV up to"), 2u) << text;
  EXPECT_EQ(count_of(text, "\nnoise: "), 1u) << text;
  EXPECT_TRUE(contains(text, fmt::format("{} of ", noisy_rows))) << text;
  EXPECT_TRUE(contains(text, "OMP_NUM_THREADS=1")) << text;  // a CPU run: pin the threads
  EXPECT_FALSE(contains(text, "re-run with")) << text;       // the per-row recommendation is gone
  EXPECT_TRUE(contains(text, "cpu time x")) << text;         // the CPU-time comparison has its row

  const std::string calm = console_text(synthetic_run({.cv = 0.001}));
  EXPECT_FALSE(contains(calm, "noise:")) << calm;
}

// Memory rows never say faster or slower, in any reporter.
TEST(Markdown, MemoryVerdictsSayMoreOrLessMemory) {
  auto run = synthetic_run({.cv = 0.001});
  for (auto& t : run.suites[0].cases[0].arms[1].trials) t.memory.peak_rss_growth_bytes = 2 << 20;
  tipbench::summarize_case(run.suites[0].cases[0], run.context.settings);
  const std::string md = r::run_markdown({"run.json", run});
  const auto row = md.substr(md.find("| memory |"));
  EXPECT_TRUE(contains(row.substr(0, row.find('\n')), "more memory")) << md;
  EXPECT_FALSE(contains(row.substr(0, row.find('\n')), "slower")) << md;
  EXPECT_TRUE(contains(console_text(run), "memory x2.000 [2.000, 2.000]  more memory")) << console_text(run);

  auto head = synthetic_run({.cv = 0.001, .seed = 2});
  for (auto& t : head.suites[0].cases[0].arms[1].trials) t.memory.peak_rss_growth_bytes = 2 << 20;
  const std::string cmp = r::comparison_markdown({{"a.json", synthetic_run({.cv = 0.001})}, {"b.json", head}}, {});
  EXPECT_TRUE(contains(cmp, "more memory")) << cmp;
  EXPECT_FALSE(contains(cmp, "slower")) << cmp;
}

// The sources' claim stands under the suite's name in the console and the HTML page, and next to
// every verdict in the Markdown summary; a suite without one shows none.
TEST(Reports, OneMachinesRunsOfDifferentSuitesMergeIntoOneRun) {
  const NamedRun a{"a.json", synthetic_run({.suites = {"zero_grad"}, .timestamp = "2026-11-26T01:00:00Z"})};
  const NamedRun b{"b.json", synthetic_run({.suites = {"tf32", "amp"}, .timestamp = "2026-11-26T02:00:00Z"})};
  const auto merged = r::merge_runs_of_one_machine({a, b});
  EXPECT_EQ(merged.label, "2 runs");  // short: the files are the parts'
  ASSERT_EQ(merged.parts.size(), 2u);
  EXPECT_EQ(merged.parts[1].label, "b.json");
  EXPECT_EQ(merged.parts[1].suites, (std::vector<std::string>{"tf32", "amp"}));
  EXPECT_EQ(merged.parts[1].timestamp_utc, "2026-11-26T02:00:00Z");
  ASSERT_EQ(merged.result.suites.size(), 3u);
  EXPECT_EQ(merged.result.suites[0].name, "zero_grad");
  EXPECT_EQ(merged.result.suites[2].name, "amp");
  EXPECT_EQ(merged.result.context.timestamp_utc, "2026-11-26T01:00:00Z");  // the first run's context
  EXPECT_TRUE(contains(r::run_markdown(merged), "| amp/")) << r::run_markdown(merged);

  // Each build is named once with its files, times and suites (not the first run's git for all);
  // each distinct warning once, with the files that had it when not all did.
  NamedRun later = b;
  later.result.context.git.sha = "0123456789abcdef0123";
  later.result.context.warnings = {"b.json.partial is a partial run: the 1 case(s) ...", "load average 3"};
  NamedRun first = a;
  first.result.context.warnings = {"load average 3"};
  const auto merged_later = r::merge_runs_of_one_machine({first, later});
  EXPECT_EQ(
      merged_later.result.context.warnings,
      (std::vector<std::string>{"load average 3", "b.json.partial is a partial run: the 1 case(s) ... (b.json)"}));
  EXPECT_EQ(r::builds_of(merged_later).size(), 2u);
  const std::string html = r::render_html(r::report_model({merged_later}, {}, {}), {merged_later}, "");
  EXPECT_TRUE(contains(html, "<td>2 builds (below)</td>")) << html;
  EXPECT_TRUE(contains(html, "<td>0123456789ab</td><td>2026-11-26T02:00:00Z</td><td>tf32, amp</td><td>b.json</td>"))
      << html;
  EXPECT_EQ(html.find("load average 3"), html.rfind("load average 3"));  // once
  EXPECT_TRUE(contains(r::run_markdown(merged_later), "- `b.json`: 2026-11-26T02:00:00Z, git 0123456789ab: tf32, amp"))
      << r::run_markdown(merged_later);

  const NamedRun other_machine{"c.json", synthetic_run({.cpu_model = "Other CPU", .suites = {"amp"}})};
  EXPECT_THROW(r::merge_runs_of_one_machine({a, other_machine}), tipbench::InputError);
  const NamedRun same_suite{"d.json", synthetic_run({.suites = {"zero_grad"}})};
  EXPECT_THROW(r::merge_runs_of_one_machine({a, same_suite}), tipbench::InputError);
  NamedRun other_settings{"e.json", synthetic_run({.suites = {"amp"}, .blocks = 4})};
  EXPECT_THROW(r::merge_runs_of_one_machine({a, other_settings}), tipbench::InputError);
}

TEST(Reports, TheSourceClaimStandsBesideTheVerdicts) {
  auto run = synthetic_run({.cv = 0.001});
  run.suites[0].source_claim = tipbench::SourceClaim{"002", "1.27-1.70x <faster> fwd+bwd"};
  EXPECT_TRUE(contains(console_text(run), "\n  source claim (002): 1.27-1.70x <faster> fwd+bwd\n"))
      << console_text(run);
  const std::vector<NamedRun> runs{{"run.json", run}};
  const std::string html = r::render_html(r::report_model(runs, {}, {}), runs, "/* Chart */");
  EXPECT_TRUE(contains(html, "<p class=claim>source claim (002): 1.27-1.70x &lt;faster&gt; fwd+bwd</p>")) << html;
  const std::string md = r::run_markdown(runs[0]);
  EXPECT_TRUE(contains(md, "| verdict | source claim |")) << md;
  const auto row = md.substr(md.find("| throughput |"));
  EXPECT_TRUE(contains(row.substr(0, row.find('\n')), "(002) 1.27-1.70x")) << md;

  run.suites[0].source_claim.reset();
  EXPECT_FALSE(contains(console_text(run), "source claim")) << console_text(run);
  EXPECT_TRUE(contains(r::run_markdown({"run.json", run}), "| - |")) << r::run_markdown({"run.json", run});
}

TEST(HtmlPage, AProfiledArmLinksItsTraceRelativeToThePageAndNamesItsTopOps) {
  auto run = synthetic_run({});
  tipbench::ArmProfile profile;
  profile.trace_file = "out/traces/zero_grad.arm-treat.trace.json";
  profile.steps = 5;
  profile.top_cpu_ops = {{"aten::mkldnn_convolution", 1.25, 3}, {"aten::<evil>", 0.5, 1}};
  run.suites[0].cases[0].arms[1].profile = profile;
  const std::vector<NamedRun> runs{{"run.json", run}};
  const std::string html = r::render_html(r::report_model(runs, {}, {}), runs, "", "out/report");
  EXPECT_TRUE(contains(html, "href=\"../traces/zero_grad.arm-treat.trace.json\"")) << html;
  EXPECT_TRUE(contains(html, "aten::mkldnn_convolution 1.250 ms (3x)")) << html;
  EXPECT_TRUE(contains(html, "aten::&lt;evil&gt;")) << html;
  EXPECT_FALSE(contains(html, "aten::<evil>")) << html;

  // The security review's trigger: a trace path that would be a javascript: link.
  run.suites[0].cases[0].arms[1].profile->trace_file = "out/report/javascript:alert(document.domain)";
  const std::vector<NamedRun> hostile{{"run.json", run}};
  const std::string page = r::render_html(r::report_model(hostile, {}, {}), hostile, "", "out/report");
  EXPECT_TRUE(contains(page, "href=\"javascript%3Aalert%28document.domain%29\"")) << page;
  EXPECT_FALSE(contains(page, "href=\"javascript:")) << page;
}

// A run made with --explain: the console prints each comparison's why under the case, the page
// has a Why section (every name from the result escaped) and a bar chart of the top keys' deltas.
TEST(HtmlPage, AnExplainedRunSaysWhyInTheConsoleThePageAndAChart) {
  auto run = synthetic_run({});
  run.context.settings.explain_steps = 3;
  auto& c = run.suites[0].cases[0];
  for (std::size_t a = 0; a < c.arms.size(); ++a) {
    for (auto& t : c.arms[a].trials) {
      tipbench::StepBreakdown b;
      b.steps = 3;
      b.keys = {{"forward", "aten::addmm", a == 0 ? 0.1 : 1.1, 1, {}}, {"backward", "aten::<evil>", 2.0, 1, {}}};
      b.step_ms = b.keys[0].ms_per_step + 2.0;
      t.breakdown = b;
    }
  }
  const std::string console = console_text(run);
  EXPECT_TRUE(contains(console, "    why " + c.arms[1].arm + " vs " + c.arms[0].arm + ":")) << console;
  EXPECT_TRUE(contains(console, "      forward  aten::addmm  +1.000 ms/step [1.000, 1.000] of 0.100")) << console;
  const std::vector<NamedRun> runs{{"run.json", run}};
  const auto model = r::report_model(runs, {}, {});
  bool chart = false;
  for (const auto& spec : model.at("charts")) chart = chart || spec.value("id", "") == "why-0";
  EXPECT_TRUE(chart) << model.dump();
  const std::string html = r::render_html(model, runs, "/* Chart */");
  EXPECT_TRUE(contains(html, "<h2>Why</h2>")) << html;
  EXPECT_TRUE(contains(html, "forward  aten::addmm  +1.000 ms/step")) << html;
  EXPECT_TRUE(contains(html, "aten::&lt;evil&gt;")) << html;
  EXPECT_FALSE(contains(html, "aten::<evil>")) << html;
}

// Only the page's own two scripts may run: the policy names them by hash, with no 'unsafe-inline'.
TEST(HtmlPage, ThePolicyRunsOnlyThePagesOwnScripts) {
  const std::vector<NamedRun> runs{{"run.json", synthetic_run({})}};
  const std::string html = r::render_html(r::report_model(runs, {}, {}), runs, "/* Chart */");
  const auto policy_at = html.find("script-src ");
  ASSERT_NE(policy_at, std::string::npos) << html;
  const std::string policy = html.substr(policy_at, html.find(';', policy_at) - policy_at);
  EXPECT_FALSE(contains(policy, "unsafe-inline")) << policy;
  const std::string chart = "\n/* Chart */\n";
  EXPECT_TRUE(contains(
      policy,
      "'sha256-" + tipbench::sha256_base64({reinterpret_cast<const std::uint8_t*>(chart.data()), chart.size()}) + "'"))
      << policy;
}

TEST(Markdown, InjectedRunsAreMarkedEverywhere) {
  auto head = synthetic_run({});
  head.context.settings.inject_slowdown_pct = 5;
  const std::vector<NamedRun> runs{{"base.json", synthetic_run({})}, {"head.json", head}};
  EXPECT_TRUE(contains(r::comparison_markdown(runs, {}), "INJECTED SLOWDOWN"));
  EXPECT_TRUE(contains(r::run_markdown(runs[1]), "INJECTED SLOWDOWN"));
  EXPECT_TRUE(contains(r::render_html(r::report_model(runs, {}, {}), runs, ""), "INJECTED SLOWDOWN"));
}

TEST(Markdown, GateVerdictHasOneRowPerCheckAndTheExitCode) {
  const auto base = synthetic_run({.cv = 0.005, .seed = 1});
  const auto current = synthetic_run({.cv = 0.005, .seed = 2});
  auto report = tipbench::gate::evaluate_gate(base, current, {}, {});
  const std::string md = r::gate_markdown(report, "base|x.json", "head.json");
  EXPECT_TRUE(contains(md, "tipbench gate: **PASS**")) << md;
  EXPECT_TRUE(contains(md, "base\\|x.json")) << md;
  EXPECT_EQ(std::count(md.begin(), md.end(), '\n') > 4, true);
  EXPECT_TRUE(contains(md, "Exit code 0")) << md;
}

// An explained check (explain_checks.h) names its top cause in the table's detail and gets its
// lines under **Why**, every name escaped for Markdown.
TEST(Markdown, AnExplainedCheckNamesItsTopCauseInTheRowAndListsWhy) {
  auto report = tipbench::gate::evaluate_gate(synthetic_run({.cv = 0.005, .seed = 1}),
                                              synthetic_run({.cv = 0.005, .seed = 2}), {}, {});
  tipbench::Explanation why;
  why.pairs = 8;
  why.steps_per_trial = 3;
  why.step_ms = {.delta = 0.8, .low = 0.5, .high = 1.1};
  why.timed_step_ms = tipbench::DeltaInterval{.delta = 0.8, .low = 0.6, .high = 1.0};
  why.causes = {{.phase = "forward", .op = "aten::addmm|x", .ms_per_step = {.delta = 0.75, .low = 0.7, .high = 0.8}}};
  why.explained_share = 0.94;
  why.unexplained = false;
  report.checks.at(0).why = why;
  const std::string md = r::gate_markdown(report, "base.json", "head.json");
  EXPECT_TRUE(contains(md, "; why: forward aten::addmm\\|x +0.750 ms/step \\[0.700, 0.800\\] (explains 94%")) << md;
  EXPECT_TRUE(contains(md, "**Why** ")) << md;
  EXPECT_TRUE(contains(md, "- forward  aten::addmm\\|x  +0.750 ms/step \\[0.700, 0.800\\]")) << md;
}

// The console's last line names the code the process really returns: the verdict's own, or 4
// when the verdict could not be written (it used to print "(exit 3)" and return 4).
TEST(GateConsole, TheLastLineNamesTheRealExitCode) {
  const auto report = tipbench::gate::evaluate_gate(synthetic_run({.cv = 0.005, .seed = 1}),
                                                    synthetic_run({.cv = 0.005, .seed = 2}), {}, {});
  const auto print = [&](std::optional<int> code) {
    char* buffer = nullptr;
    std::size_t size = 0;
    std::FILE* out = ::open_memstream(&buffer, &size);
    r::print_gate_report(report, "base.json", "head.json", out, code);
    std::fclose(out);
    std::string text(buffer, size);
    std::free(buffer);
    return text.substr(text.rfind("Result is:"));
  };
  EXPECT_EQ(print(std::nullopt), "Result is: PASS (exit 0)\n");
  EXPECT_EQ(print(0), "Result is: PASS (exit 0)\n");
  EXPECT_EQ(print(4), "Result is: PASS, but the gate could not deliver it (exit 4)\n");
}

// ---------------------------------------------------------------------------------------------
// The page in a real browser: headless Chromium (Debian's `chromium`, installed by
// scripts/bootstrap.sh --test) loads the file offline, the charts draw (every canvas painted),
// no JavaScript error occurs, and a screenshot is taken.

// Runs argv with stdout to `out` (stderr discarded); returns the exit status.
int run_to_file(const std::vector<std::string>& args, const std::string& out) {
  return tipbench::testing::run_child(args, out, "").code;
}

// The page in headless Chromium at `window` ("1200,4000"): its DOM once the scripts have run, and
// a screenshot (PNG bytes, written beside it). A failed browser leaves the part it did not make empty.
struct InBrowser {
  std::string dom, png;
};
InBrowser open_in_chromium(const std::string& chromium, const std::filesystem::path& dir, const std::string& html_path,
                           const std::string& window) {
  const auto common = tipbench::testing::chromium_args(chromium, dir / "profile", window);
  InBrowser seen;
  auto dump = common;
  dump.insert(dump.end(), {"--dump-dom", "file://" + html_path});
  if (run_to_file(dump, (dir / "dom.html").string()) == 0) seen.dom = tipbench::testing::read_bytes(dir / "dom.html");
  auto shot = common;
  shot.insert(shot.end(), {"--screenshot=" + (dir / "page.png").string(), "file://" + html_path});
  if (run_to_file(shot, (dir / "shot.log").string()) == 0) seen.png = tipbench::testing::read_bytes(dir / "page.png");
  return seen;
}

TEST(HtmlInBrowser, ChartsDrawInHeadlessChromiumWithoutJavaScriptErrors) {
  const std::string chromium = tipbench::testing::find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/bootstrap.sh --test installs it)";
  const std::string chartjs = r::default_chartjs_path();
  if (::access(chartjs.c_str(), R_OK) != 0) GTEST_SKIP() << "libjs-chart.js is not installed";
  const auto dir = tipbench::testing::fresh_scratch_dir("report_browser");

  auto run = synthetic_run({.blocks = 6, .cv = 0.01, .seed = 2});
  run.suites.push_back({"dataloader", "d", "in_process", {grid_case()}, {}, {}});
  run.suites.push_back(
      {"batch_size", "b", "in_process", {level_case("batch_size", "batch", {"8", "16", "32"})}, {}, {}});
  run.suites.push_back(
      {"checkpointing", "c", "in_process", {level_case("checkpointing", "checkpoint", {"none", "all"})}, {}, {}});
  run.suites.push_back({"ddp", "p", "in_process", {level_case("ddp", "world_size", {"1", "2", "4"})}, {}, {}});
  run.suites.push_back({"dataloader_ladder", "l", "in_process", {ladder_case()}, {}, {}});
  run.suites[0].description = "</script><b>not bold</b>";
  const std::vector<NamedRun> runs{
      {"base.json", synthetic_run({.blocks = 6, .cv = 0.01, .seed = 1, .timestamp = "2026-01-01T00:00:00Z"})},
      {"head.json", run}};
  const auto model = r::report_model(runs, {}, {.primary = 1});
  const std::size_t expected = model.at("charts").size();
  ASSERT_EQ(expected, 8u);  // speedup, change, heatmap, batch, tradeoff, scaling, ladder, trend
  const std::string html_path = (dir / "report.html").string();
  tipbench::testing::write_bytes(html_path, r::render_html(model, runs, r::read_chartjs(chartjs)));

  const auto seen = open_in_chromium(chromium, dir, html_path, "1200,4000");
  ASSERT_FALSE(seen.dom.empty());
  EXPECT_TRUE(contains(seen.dom, "data-charts-drawn=\"" + std::to_string(expected) + "\"")) << seen.dom.substr(0, 2000);
  EXPECT_TRUE(contains(seen.dom, "data-js-errors=\"0\"")) << seen.dom.substr(0, 2000);
  EXPECT_FALSE(contains(seen.dom, "<b>not bold</b>"));
  ASSERT_GT(seen.png.size(), 20000u);  // a page of charts, not a blank one
  EXPECT_EQ(seen.png.substr(1, 3), "PNG");
}

// What a findings page takes from result files (a claim, an arm's model name, a file's label, a
// warning) reaches it escaped: the findings table, the MFU table and the builds table.
TEST(HtmlPage, AFindingsPageEscapesWhatItsResultsSay) {
  std::vector<NamedRun> files;
  for (const std::string suite : {"amp", "tf32"}) {
    auto run = synthetic_run({.suites = {suite}, .git_sha = std::string(40, suite == "amp" ? 'a' : 'b')});
    run.context.device = "cuda:0";
    tipbench::GpuInfo gpu;
    gpu.name = "NVIDIA H200";
    run.context.fingerprint.gpus = {gpu};
    run.context.warnings = {"<script>alert(1)</script>"};
    run.suites[0].source_claim = tipbench::SourceClaim{"001", "<b>bold</b> claim"};
    for (auto& arm : run.suites[0].cases[0].arms) {
      arm.info = {{"model", "<img src=x onerror=alert(1)>"},
                  {"image_size", 224},
                  {"precision", "bf16"},
                  {"input_shapes", "fixed"},
                  {"training_flops_per_sample", 1e9}};
    }
    files.push_back({suite + "<i>.json", run});
  }
  const auto merged = r::merge_runs_of_one_machine(files);
  const std::string html = r::render_html(r::report_model({merged}, {}, {}), {merged}, "");
  EXPECT_TRUE(contains(html, "<h3>Model FLOP utilisation</h3>"));
  EXPECT_TRUE(contains(html, "&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_FALSE(contains(html, "<img src=x"));
  EXPECT_FALSE(contains(html, "<b>bold</b>"));
  EXPECT_FALSE(contains(html, "<i>.json"));
  EXPECT_FALSE(contains(html, "<script>alert(1)</script>"));
  const std::string md = r::run_markdown(merged);
  EXPECT_FALSE(contains(md, "<img src=x")) << md;
  EXPECT_FALSE(contains(md, "<i>.json")) << md;
}

// A case with a python_eager arm gets a row of the C++ step against Python eager: the harness's
// comparison of the Python arm with the C++ baseline, read the other way round.
TEST(HtmlPage, AFindingsPageSetsTheCppStepAgainstPythonEager) {
  auto run = synthetic_run({.arms = {"none", "zero", "python_eager"}});
  auto& c = run.suites[0].cases[0];
  tipbench::Comparison* python = nullptr;
  for (auto& k : c.comparisons) {
    if (k.treatment == "python_eager" && k.metric == "throughput_samples_per_s") python = &k;
  }
  ASSERT_NE(python, nullptr);
  python->estimate = {.ratio = 0.8, .ci_low = 0.78, .ci_high = 0.82, .blocks = 10};
  python->verdict = tipbench::stats::Verdict::slower;
  const std::vector<NamedRun> runs{{"run.json", run}};
  const std::string html = r::render_html(r::report_model(runs, {}, {}), runs, "");
  EXPECT_TRUE(contains(html, "<h3>tipbench's C++ step against Python eager</h3>")) << html.substr(0, 3000);
  // 1/0.8 = 1.25; the interval's ends 1/0.82 and 1/0.78, swapped; slower for Python is faster for C++.
  EXPECT_TRUE(contains(html, "<td>none vs Python eager</td><td><span class=ratio>x1.250 [1.220, 1.282]</span> faster"))
      << html.substr(html.find("C++ step against"), 1500);
}

// A findings page (report --one-machine): the runs of a GPU campaign by three builds, each with
// the same environment warning. The page opens with what the claims came to and the MFU per
// model, names each build once and each warning once, and draws its ratios on a log axis; in
// headless Chromium every chart draws, no script fails, and a screenshot is taken.
TEST(HtmlInBrowser, AOneMachineFindingsPageOpensWithItsSummary) {
  const std::string chromium = tipbench::testing::find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/bootstrap.sh --test installs it)";
  const std::string chartjs = r::default_chartjs_path();
  if (::access(chartjs.c_str(), R_OK) != 0) GTEST_SKIP() << "libjs-chart.js is not installed";
  const auto dir = tipbench::testing::fresh_scratch_dir("findings_browser");

  std::vector<NamedRun> files;
  const std::vector<std::pair<std::string, double>> suites{{"amp", 1.19}, {"zero_grad", 0.987}, {"tf32", 2.15}};
  for (std::size_t i = 0; i < suites.size(); ++i) {
    auto run = synthetic_run({.suites = {suites[i].first},
                              .model = "resnet50",
                              .git_sha = std::string(40, static_cast<char>('a' + i)),
                              .cv = 0.002,
                              .factor = 1.0,
                              .seed = i,
                              .timestamp = fmt::format("2026-11-2{}T00:00:00Z", 6 + i)});
    run.context.device = "cuda:0";
    tipbench::GpuInfo gpu;
    gpu.name = "NVIDIA H100 80GB HBM3";
    run.context.fingerprint.gpus = {gpu};
    run.context.warnings = {"the clocks were not locked"};
    auto& suite = run.suites[0];
    suite.source_claim = tipbench::SourceClaim{"00" + std::to_string(i), "a claim of " + suites[i].first};
    for (auto& arm : suite.cases[0].arms) {
      arm.info = {{"model", "resnet50"},
                  {"image_size", 224},
                  {"precision", arm.baseline ? "fp32" : "bf16"},
                  {"input_shapes", "fixed"},
                  {"training_flops_per_sample", 24299077632.0}};
    }
    for (auto& c : suite.cases[0].comparisons) {
      if (c.metric == "throughput_samples_per_s")
        c.estimate = {.ratio = suites[i].second,
                      .ci_low = suites[i].second * 0.999,
                      .ci_high = suites[i].second * 1.001,
                      .blocks = 10};
    }
    files.push_back({fmt::format("h100-{}.json", suites[i].first), run});
  }
  const auto merged = r::merge_runs_of_one_machine(files);
  const auto model = r::report_model({merged}, {}, {});
  ASSERT_FALSE(model.at("charts").empty());
  EXPECT_EQ(model.at("charts").at(0).at("id"), "speedup");
  EXPECT_EQ(model.at("charts").at(0).at("scale"), "log");
  const std::string html = r::render_html(model, {merged}, r::read_chartjs(chartjs));
  // The summary comes first: the claims' verdicts, then the MFU table, then warnings and runs.
  const auto findings = html.find("<h2>Findings</h2>"), runs = html.find("<h2>Runs</h2>");
  ASSERT_NE(findings, std::string::npos);
  EXPECT_LT(findings, html.find("the clocks were not locked"));
  EXPECT_LT(html.find("the clocks were not locked"), runs);
  EXPECT_TRUE(contains(html, "(001) a claim of zero_grad")) << html.substr(findings, 3000);
  EXPECT_TRUE(contains(html, "<h3>Model FLOP utilisation</h3>")) << html.substr(findings, 3000);
  EXPECT_EQ(html.find("the clocks were not locked"), html.rfind("the clocks were not locked"));
  EXPECT_TRUE(contains(html, "<td>3 builds (below)</td>"));
  EXPECT_TRUE(contains(html, "<h2>Arms of 3 runs</h2>"));
  const std::string html_path = (dir / "report.html").string();
  tipbench::testing::write_bytes(html_path, html);

  const auto seen = open_in_chromium(chromium, dir, html_path, "1200,2400");
  ASSERT_FALSE(seen.dom.empty());
  EXPECT_TRUE(contains(seen.dom, fmt::format("data-charts-drawn=\"{}\"", model.at("charts").size())))
      << seen.dom.substr(0, 2000);
  EXPECT_TRUE(contains(seen.dom, "data-js-errors=\"0\"")) << seen.dom.substr(0, 2000);
  ASSERT_GT(seen.png.size(), 20000u);  // the summary, tables and the chart, not a blank page
  EXPECT_EQ(seen.png.substr(1, 3), "PNG");
}

}  // namespace
