// The result document: the schema round trip, and what read_result rejects and how (always
// InputError, always naming the file).
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
#include <tuple>
#include <vector>
#include "sample_result.h"

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using tipbench::ArmStatus;
using tipbench::InputError;
using tipbench::Result;
using tipbench::Trial;
using tipbench::stats::Verdict;
using tipbench::testing::expect_throw_containing;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::make_trial;
using tipbench::testing::read_bytes;
using tipbench::testing::sample_result;
using tipbench::testing::sample_text;
using tipbench::testing::write_bytes;

// ---------------------------------------------------------------------------------------------
// Schema round trip

TEST(ResultSchema, VersionIsMajorDotMinor) {
  EXPECT_EQ(tipbench::schema_version(), "1.16");
  EXPECT_EQ(Result{}.schema_version, tipbench::schema_version());
}

// Since 1.9 a significant change under the threshold has its own verdict, which reads back; an
// older document's no_significant_difference reads as under_threshold where its interval excludes
// 1 (the same rule: the word did not exist), as it was written where the interval holds 1.
TEST(ResultSchema, TheUnderThresholdVerdictRoundTrips) {
  Result r = sample_result();
  r.suites[0].cases[0].comparisons.at(0).verdict = tipbench::stats::Verdict::under_threshold;
  ojson doc = tipbench::to_json_document(r);
  EXPECT_EQ(doc["suites"][0]["cases"][0]["comparisons"][0]["verdict"], "under_threshold");
  EXPECT_EQ(tipbench::parse_result(doc, "memory").suites[0].cases[0].comparisons.at(0).verdict,
            tipbench::stats::Verdict::under_threshold);
  doc["schema_version"] = "1.8";
  auto& old = doc["suites"][0]["cases"][0]["comparisons"][0];
  old["verdict"] = "no_significant_difference";
  old["ratio"] = 0.987;  // zero_grad on an H100: x0.987 [0.9870, 0.9875]
  old["ci95_low"] = 0.9870;
  old["ci95_high"] = 0.9875;
  EXPECT_EQ(tipbench::parse_result(doc, "memory").suites[0].cases[0].comparisons.at(0).verdict,
            tipbench::stats::Verdict::under_threshold);
  old["ci95_high"] = 1.001;
  EXPECT_EQ(tipbench::parse_result(doc, "memory").suites[0].cases[0].comparisons.at(0).verdict,
            tipbench::stats::Verdict::no_significant_difference);
}

// A result from before sequential blocks (1.6: no min_blocks, no stop reasons) ran a fixed
// number of blocks, and reads as such; a 1.7 comparison's stop reason comes back as written.
TEST(ResultSchema, ADocumentBeforeSequentialBlocksReadsAsAFixedCount) {
  ojson doc = tipbench::to_json_document(sample_result());
  doc["schema_version"] = "1.6";
  doc["context"]["settings"].erase("min_blocks");
  doc["context"]["settings"].erase("precision");
  doc["context"]["settings"]["blocks"] = 10;
  auto& cmp = doc["suites"][0]["cases"][0]["comparisons"][0];
  cmp.erase("stop");
  const Result old = tipbench::parse_result(doc, "memory");
  EXPECT_EQ(old.context.settings.min_blocks, 10);
  EXPECT_TRUE(tipbench::fixed_blocks(old.context.settings));
  EXPECT_EQ(old.suites[0].cases[0].comparisons.at(0).stop, tipbench::StopReason::fixed);

  cmp["stop"] = "unresolved";
  cmp["blocks_to_resolve"] = 37;
  const Result now = tipbench::parse_result(doc, "memory");
  EXPECT_EQ(now.suites[0].cases[0].comparisons.at(0).stop, tipbench::StopReason::unresolved);
  EXPECT_EQ(now.suites[0].cases[0].comparisons.at(0).blocks_to_resolve, 37u);
  cmp["stop"] = "done";
  EXPECT_THROW(tipbench::parse_result(doc, "memory"), tipbench::InputError);
}

// A case's wall time and budget cut (1.8) round trip; an older case has neither; a negative
// wall time is damage.
TEST(ResultSchema, ACaseRecordsItsWallTimeAndWhatTheBudgetCut) {
  ojson doc = tipbench::to_json_document(sample_result());
  auto& c = doc["suites"][0]["cases"][0];
  c["wall_s"] = 12.5;
  c["budget_cut"] = "its share of the 15m time budget, 52s, ended after 3 of 20 blocks";
  const Result r = tipbench::parse_result(doc, "now");
  EXPECT_DOUBLE_EQ(r.suites[0].cases[0].wall_s, 12.5);
  EXPECT_EQ(tipbench::to_json_document(r)["suites"][0]["cases"][0]["budget_cut"], c["budget_cut"]);
  c.erase("wall_s");
  c.erase("budget_cut");
  EXPECT_TRUE(tipbench::parse_result(doc, "old").suites[0].cases[0].budget_cut.empty());
  c["wall_s"] = -1;
  EXPECT_THROW(tipbench::parse_result(doc, "damaged"), tipbench::InputError);
}

// A result from before kept workloads (1.7) built every trial's workload anew.
TEST(ResultSchema, ADocumentBeforeKeptWorkloadsBuiltEveryTrialAnew) {
  ojson doc = tipbench::to_json_document(sample_result());
  EXPECT_TRUE(tipbench::parse_result(doc, "now").context.settings.keep_workloads);
  doc["schema_version"] = "1.7";
  doc["context"]["settings"].erase("keep_workloads");
  EXPECT_FALSE(tipbench::parse_result(doc, "old").context.settings.keep_workloads);
}

TEST(ResultSchema, DocumentRoundTripsThroughParse) {
  const Result r = sample_result();
  const ojson doc = tipbench::to_json_document(r);
  const Result back = tipbench::parse_result(doc, "memory");
  const ojson again = tipbench::to_json_document(back);
  EXPECT_EQ(doc, again);
  EXPECT_EQ(doc.dump(), again.dump());  // same key order too

  // Spot checks that the fields really came back (not only that both sides lost them alike).
  EXPECT_EQ(back.context.fingerprint.gpus.at(0).memory_bytes, 85'045'477'376);
  EXPECT_EQ(back.context.settings.seed, 42u);
  EXPECT_EQ(back.context.settings.blocks, tipbench::quick_settings().blocks);
  EXPECT_TRUE(back.context.git.dirty);
  EXPECT_EQ(back.context.argv, r.context.argv);
  EXPECT_EQ(back.context.warnings, r.context.warnings);
  ASSERT_EQ(back.suites.size(), 2u);
  EXPECT_TRUE(back.suites[1].cases.empty());
  EXPECT_EQ(back.suites[0].source_claim, r.suites[0].source_claim);
  EXPECT_FALSE(back.suites[1].source_claim.has_value());  // a suite without one writes no key
  const auto& arms = back.suites[0].cases.at(0).arms;
  ASSERT_EQ(arms.size(), 4u);
  EXPECT_TRUE(arms[0].baseline);
  EXPECT_EQ(arms[0].levels, r.suites[0].cases[0].arms[0].levels);
  EXPECT_EQ(arms[0].info, r.suites[0].cases[0].arms[0].info);
  EXPECT_EQ(arms[0].trials.at(2).memory.peak_reserved_bytes, 2'000'000'000'002LL);
  EXPECT_FALSE(arms[1].trials.at(0).memory.peak_reserved_bytes.has_value());
  EXPECT_FALSE(arms[1].trials.at(0).memory.peak_rss_growth_bytes.has_value());
  EXPECT_EQ(arms[0].trials.at(1).step_times_ms, r.suites[0].cases[0].arms[0].trials[1].step_times_ms);
  EXPECT_EQ(arms[2].status, ArmStatus::skipped);
  EXPECT_EQ(arms[2].reason, "needs CUDA");
  EXPECT_EQ(arms[3].status, ArmStatus::failed);
  EXPECT_EQ(arms[3].trials.size(), 1u);
  EXPECT_EQ(arms[0].peak_memory_bytes, 1'000'000'001);
  EXPECT_EQ(arms[0].memory_metric, "peak_allocated_bytes");
  EXPECT_EQ(arms[0].step_time_ms.n, 15u);
  EXPECT_EQ(arms[0].trials.at(1).metrics,
            (std::map<std::string, double>{{"data_wait_fraction", 0.32}, {"h2d_copy_ms", 1.9}}));
  ASSERT_EQ(arms[0].metrics.count("data_wait_fraction"), 1u);
  EXPECT_DOUBLE_EQ(arms[0].metrics.at("data_wait_fraction").median, 0.32);
  EXPECT_EQ(arms[0].metrics.at("h2d_copy_ms").n, 3u);
  EXPECT_TRUE(arms[1].metrics.empty());
  EXPECT_TRUE(arms[1].trials.at(0).metrics.empty());
  EXPECT_EQ(arms[0].throughput_samples_per_s.n, 3u);
  // CPU time per step (schema 1.2): recorded where a trial has it, absent where not.
  EXPECT_TRUE(arms[0].trials.at(0).step_cpu_times_ms.empty());
  EXPECT_FALSE(arms[0].step_cpu_time_ms.has_value());
  EXPECT_EQ(arms[1].trials.at(2).step_cpu_times_ms, std::vector<double>(6, 23.5));
  ASSERT_TRUE(arms[1].step_cpu_time_ms.has_value());
  EXPECT_EQ(arms[1].step_cpu_time_ms->n, 18u);
  EXPECT_EQ(arms[1].step_cpu_time_ms->median, 22.5);
  EXPECT_EQ(tipbench::cpu_time_per_step_ms(arms[1].trials.at(1)), 22.5);
  EXPECT_EQ(tipbench::cpu_time_per_step_ms(arms[0].trials.at(1)), std::nullopt);
  // Profiles (schema 1.2): the trace, its top ops, and why one was not written.
  ASSERT_TRUE(arms[1].profile.has_value());
  EXPECT_EQ(arms[1].profile->trace_file, "traces/zero_grad.model-resnet18.batch-64.arm-zero.trace.json");
  EXPECT_EQ(arms[1].profile->top_cpu_ops.at(0).name, "aten::mkldnn_convolution");
  EXPECT_EQ(arms[1].profile->top_cpu_ops.at(0).self_ms_per_step, 4.25);
  EXPECT_EQ(arms[1].profile->top_cpu_ops.at(0).calls_per_step, 20);
  EXPECT_EQ(arms[1].profile->top_cuda_kernels.at(0).name, "sm90_xmma_gemm");
  EXPECT_EQ(arms[1].profile->error, "");
  ASSERT_TRUE(arms[0].profile.has_value());
  EXPECT_EQ(arms[0].profile->error, "profiler unavailable");
  EXPECT_FALSE(arms[2].profile.has_value());
  const auto& cmps = back.suites[0].cases[0].comparisons;
  ASSERT_EQ(cmps.size(), 3u);
  EXPECT_EQ(cmps[0].estimate.ratio, 0.912345678901);  // doubles survive exactly
  EXPECT_EQ(cmps[0].verdict, Verdict::slower);
  EXPECT_EQ(cmps[0].cv, 0.0625);
  EXPECT_TRUE(cmps[0].noisy);
  EXPECT_EQ(cmps[0].recommendation, "re-run with --blocks 40");
  EXPECT_EQ(cmps[1].metric, "step_cpu_time_ms");
  EXPECT_EQ(cmps[2].metric, "peak_allocated_bytes");
  // Counted work (1.14): in the treatment's block-0 trial only, every part back.
  const auto* counts = tipbench::counts_of(arms[1]);
  ASSERT_NE(counts, nullptr);
  EXPECT_EQ(counts, &*arms[1].trials.at(0).counts);
  EXPECT_FALSE(arms[1].trials.at(1).counts.has_value());
  EXPECT_EQ(counts->ops.at(0).name, "aten::add_");
  EXPECT_EQ(counts->top_level_ops_per_step, 131);
  EXPECT_EQ(counts->copies.at(0).bytes_per_step, 1'048'576);
  EXPECT_EQ(counts->syncs_per_step, 1);
  EXPECT_EQ(counts->instructions_per_step, 141'165'412);  // 1.15
  EXPECT_EQ(counts->instruction_counter, "perf_event");
  EXPECT_EQ(counts->instructions_spread, 0.00015);  // 1.16
  EXPECT_EQ(counts->instructions_onednn_isa, "AVX");
  EXPECT_EQ(tipbench::counts_of(arms[0]), nullptr);
}

// A trial's counts from elsewhere are checked as they enter: a negative count, a name with a
// control character and an overlong list are refused by name.
TEST(ResultSchema, BadCountsAreRefused) {
  const ojson good = tipbench::step_counts_to_json(*tipbench::counts_of(sample_result().suites[0].cases[0].arms[1]));
  EXPECT_NO_THROW(tipbench::step_counts_from_json(good));
  auto negative = good;
  negative["ops_per_step"] = -1;
  EXPECT_THROW(tipbench::step_counts_from_json(negative), std::invalid_argument);
  auto control = good;
  control["ops"][0]["name"] = "aten::add_\x1b[31m";
  EXPECT_THROW(tipbench::step_counts_from_json(control), std::invalid_argument);
  auto long_list = good;
  long_list["kernels"] = ojson::array();
  for (std::size_t i = 0; i <= tipbench::kMaxCountedNames; ++i) long_list["kernels"].push_back(good["kernels"][0]);
  EXPECT_THROW(tipbench::step_counts_from_json(long_list), std::invalid_argument);
  auto unknown_counter = good;
  unknown_counter["instruction_counter"] = "rdtsc";
  EXPECT_THROW(tipbench::step_counts_from_json(unknown_counter), std::invalid_argument);
  auto no_counter = good;
  no_counter.erase("instruction_counter");
  EXPECT_ANY_THROW(tipbench::step_counts_from_json(no_counter)) << "a count names its counter";
  auto bad_note = good;
  bad_note["instructions_note"] = std::string("no PMU") + '\x1b';
  EXPECT_THROW(tipbench::step_counts_from_json(bad_note), std::invalid_argument);
  for (const double bad : {-0.001, std::numeric_limits<double>::infinity()}) {
    auto bad_spread = good;
    bad_spread["instructions_spread"] = bad;
    EXPECT_ANY_THROW(tipbench::step_counts_from_json(bad_spread)) << bad;
  }
  for (const std::string& bad : {std::string(""), std::string(33, 'A'), std::string("AVX\n")}) {
    auto bad_isa = good;
    bad_isa["instructions_onednn_isa"] = bad;
    EXPECT_THROW(tipbench::step_counts_from_json(bad_isa), std::invalid_argument) << bad;
  }
  auto no_spread = good;
  no_spread.erase("instructions_spread");
  EXPECT_FALSE(tipbench::step_counts_from_json(no_spread).instructions_spread) << "1.15 recorded none";
  EXPECT_THROW(tipbench::parse_result_text(R"({"schema_version":"1.16"})", "x"), tipbench::InputError);
}

// A document before 1.15 counted no instructions: its settings read instructions "off", and a
// settings object naming an unknown mode is refused.
TEST(ResultSchema, ADocumentBeforeCountedInstructionsCountedNone) {
  ojson doc = tipbench::to_json_document(sample_result());
  EXPECT_EQ(tipbench::parse_result(doc, "now").context.settings.instructions, "auto");
  doc["schema_version"] = "1.14";
  doc["context"]["settings"].erase("instructions");
  doc["context"]["settings"].erase("inject_extra_ops");
  EXPECT_EQ(tipbench::parse_result(doc, "old").context.settings.instructions, "off");
  doc["schema_version"] = "1.15";
  doc["context"]["settings"]["instructions"] = "rdtsc";
  EXPECT_THROW(tipbench::parse_result(doc, "bad"), tipbench::InputError);
}

// A document before 1.14 counted nothing: its settings read count_steps 0.
TEST(ResultSchema, ADocumentBeforeCountedWorkCountedNothing) {
  ojson doc = tipbench::to_json_document(sample_result());
  EXPECT_EQ(tipbench::parse_result(doc, "now").context.settings.count_steps, 2);
  doc["schema_version"] = "1.13";
  doc["context"]["settings"].erase("count_steps");
  EXPECT_EQ(tipbench::parse_result(doc, "old").context.settings.count_steps, 0);
}

TEST(ResultSchema, DocumentOpensWithSchemaVersionAndUsesUnitsInKeys) {
  const ojson doc = tipbench::to_json_document(sample_result());
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.begin().key(), "schema_version");
  EXPECT_EQ(doc.at("schema_version"), "1.16");
  const auto& arm = doc.at("suites").at(0).at("cases").at(0).at("arms").at(0);
  EXPECT_TRUE(arm.at("trials").at(0).contains("step_times_ms"));
  EXPECT_TRUE(arm.at("trials").at(0).contains("throughput_samples_per_s"));
  EXPECT_TRUE(arm.at("summary").contains("step_time_ms"));
  EXPECT_EQ(arm.at("status"), "ok");
  const auto& cmp = doc.at("suites").at(0).at("cases").at(0).at("comparisons").at(0);
  EXPECT_EQ(cmp.at("verdict"), "slower");
  EXPECT_TRUE(cmp.contains("ci95_low"));
  EXPECT_TRUE(cmp.contains("ci95_high"));
}

TEST(ResultSchema, TrialRoundTrips) {
  Trial t = make_trial(4, 2, 7.5, 32, 9);
  t.memory.peak_rss_growth_bytes = 123456789;
  t.metrics = {{"data_wait_fraction", 0.125}};
  const Trial back = tipbench::trial_from_json(tipbench::trial_to_json(t));
  EXPECT_EQ(tipbench::trial_to_json(back), tipbench::trial_to_json(t));
  EXPECT_EQ(back.memory.peak_rss_growth_bytes, 123456789);
  EXPECT_FALSE(back.memory.peak_allocated_bytes.has_value());
  EXPECT_EQ(back.metrics, t.metrics);
}

// Before 1.8 every trial built its workload: a trial without the key did not reuse one.
TEST(ResultSchema, ATrialBeforeKeptWorkloadsBuiltItsOwn) {
  Trial t = make_trial(1, 0, 5.0, 8, 3);
  t.reused_workload = true;
  ojson j = tipbench::trial_to_json(t);
  EXPECT_TRUE(tipbench::trial_from_json(j).reused_workload);
  j.erase("reused_workload");
  EXPECT_FALSE(tipbench::trial_from_json(j).reused_workload);
}

TEST(ResultSchema, TrialWithoutMetricsKeyReadsAsNoMetrics) {
  // Results written before workload metrics existed have no "metrics" key: still schema 1.x.
  ojson j = tipbench::trial_to_json(make_trial(0, 0, 5.0, 8, 3));
  j.erase("metrics");
  EXPECT_TRUE(tipbench::trial_from_json(j).metrics.empty());
}

TEST(ResultSchema, FileRoundTripsThroughWriteAndRead) {
  const auto dir = fresh_scratch_dir("result_file_roundtrip");
  const std::string path = (dir / "r.json").string();
  const Result r = sample_result();
  tipbench::write_result_atomically(r, path);
  const Result back = tipbench::read_result(path);
  EXPECT_EQ(tipbench::to_json_document(back), tipbench::to_json_document(r));
  // The file is the indented document with a trailing newline.
  EXPECT_EQ(read_bytes(path), tipbench::to_json_document(r).dump(2) + "\n");
}

TEST(ResultSchema, AcceptsANewerMinorVersion) {
  ojson doc = tipbench::to_json_document(sample_result());
  doc["schema_version"] = "1.13";
  EXPECT_EQ(tipbench::parse_result(doc, "minor.json").schema_version, "1.13");
}

TEST(ResultSchema, IgnoresSettingsKeysOfANewerMinorVersion) {
  // A result is a record: settings written by a newer tipbench may carry keys this one does not
  // know. They are dropped on reading; the known ones are kept. (Settings given as input stay
  // strict: see MeasureSettingsJson.UnknownKeyIsAnError.)
  ojson doc = tipbench::to_json_document(sample_result());
  doc["schema_version"] = "1.3";
  doc["context"]["settings"]["warp_speed"] = 9;
  const Result r = tipbench::parse_result(doc, "newer.json");
  EXPECT_EQ(r.context.settings.seed, 42u);
  EXPECT_EQ(r.context.settings.blocks, tipbench::quick_settings().blocks);
}

// ---------------------------------------------------------------------------------------------
// What read_result rejects: always InputError, always naming the file.

class ReadResultRejects : public ::testing::Test {
 protected:
  // One directory per test: ctest -j runs the tests of this fixture at the same time.
  void SetUp() override {
    dir_ = fresh_scratch_dir(std::string("read_result_rejects_") +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::string file_with(const std::string& name, const std::string& content) {
    const auto path = dir_ / name;
    write_bytes(path, content);
    return path.string();
  }
  fs::path dir_;
};

TEST_F(ReadResultRejects, MissingFile) {
  const std::string path = (dir_ / "no-such-file.json").string();
  expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path});
}

TEST_F(ReadResultRejects, ADirectory) {
  const std::string path = dir_.string();
  expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path});
}

TEST_F(ReadResultRejects, EmptyFile) {
  const auto path = file_with("empty.json", "");
  expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path});
}

TEST_F(ReadResultRejects, TruncatedJson) {
  const std::string text = sample_text();
  const auto path = file_with("truncated.json", text.substr(0, text.size() / 2));
  expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path, "JSON"});
}

TEST_F(ReadResultRejects, NotAnObject) {
  const auto array = file_with("array.json", "[1, 2, 3]");
  expect_throw_containing<InputError>([&] { tipbench::read_result(array); }, {array, "schema_version"});
  const auto string = file_with("string.json", "\"1.0\"");
  expect_throw_containing<InputError>([&] { tipbench::read_result(string); }, {string});
}

TEST_F(ReadResultRejects, MissingSchemaVersion) {
  ojson doc = tipbench::to_json_document(sample_result());
  doc.erase("schema_version");
  const auto path = file_with("unversioned.json", doc.dump());
  expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path, "schema_version"});
}

TEST_F(ReadResultRejects, NonStringSchemaVersion) {
  ojson doc = tipbench::to_json_document(sample_result());
  doc["schema_version"] = 1;
  const auto path = file_with("numeric-version.json", doc.dump());
  expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path, "schema_version"});
}

TEST_F(ReadResultRejects, NewerMajorVersionAsksForAnUpgrade) {
  ojson doc = tipbench::to_json_document(sample_result());
  doc["schema_version"] = "2.0";
  const auto path = file_with("v2.json", doc.dump());
  expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path, "2.0", "upgrade"});
}

TEST_F(ReadResultRejects, OlderOrGarbledMajorVersion) {
  for (const std::string version : {"0.9", "abc", ""}) {
    ojson doc = tipbench::to_json_document(sample_result());
    doc["schema_version"] = version;
    const auto path = file_with("old.json", doc.dump());
    expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path, "version"});
  }
}

TEST_F(ReadResultRejects, DocumentMissingARequiredKey) {
  // Each of these deletions leaves a document that is JSON and versioned but not a result.
  const std::vector<std::pair<std::string, std::function<void(ojson&)>>> breakages = {
      {"context", [](ojson& d) { d.erase("context"); }},
      {"suites", [](ojson& d) { d.erase("suites"); }},
      {"context.fingerprint", [](ojson& d) { d["context"].erase("fingerprint"); }},
      {"context.settings", [](ojson& d) { d["context"].erase("settings"); }},
      {"suite.name", [](ojson& d) { d["suites"][0].erase("name"); }},
      {"case.arms", [](ojson& d) { d["suites"][0]["cases"][0].erase("arms"); }},
      {"arm.status", [](ojson& d) { d["suites"][0]["cases"][0]["arms"][0].erase("status"); }},
      {"arm.summary", [](ojson& d) { d["suites"][0]["cases"][0]["arms"][1].erase("summary"); }},
      {"trial.step_times_ms",
       [](ojson& d) { d["suites"][0]["cases"][0]["arms"][0]["trials"][0].erase("step_times_ms"); }},
      {"comparison.ratio", [](ojson& d) { d["suites"][0]["cases"][0]["comparisons"][0].erase("ratio"); }},
  };
  for (const auto& [what, breakage] : breakages) {
    SCOPED_TRACE(what);
    ojson doc = tipbench::to_json_document(sample_result());
    breakage(doc);
    const auto path = file_with("broken.json", doc.dump());
    expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path, "schema"});
    // parse_result names its origin the same way.
    expect_throw_containing<InputError>([&] { tipbench::parse_result(doc, "origin-x"); }, {"origin-x"});
  }
}

TEST_F(ReadResultRejects, WrongTypesAndUnknownEnumValues) {
  const std::vector<std::pair<std::string, std::function<void(ojson&)>>> breakages = {
      {"status", [](ojson& d) { d["suites"][0]["cases"][0]["arms"][0]["status"] = "exploded"; }},
      {"verdict", [](ojson& d) { d["suites"][0]["cases"][0]["comparisons"][0]["verdict"] = "meh"; }},
      {"baseline type", [](ojson& d) { d["suites"][0]["cases"][0]["arms"][0]["baseline"] = "yes"; }},
      {"step times type",
       [](ojson& d) { d["suites"][0]["cases"][0]["arms"][0]["trials"][0]["step_times_ms"] = "fast"; }},
      {"suites type", [](ojson& d) { d["suites"] = 3; }},
      {"settings type", [](ojson& d) { d["context"]["settings"]["blocks"] = "ten"; }},
  };
  for (const auto& [what, breakage] : breakages) {
    SCOPED_TRACE(what);
    ojson doc = tipbench::to_json_document(sample_result());
    breakage(doc);
    const auto path = file_with("wrong.json", doc.dump());
    expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path});
  }
}

// The security review's triggers: strings a result carries that would reach a path (a git commit
// substituted into --binaries), a Python comment (advise's recipe.py) or a Markdown table.
TEST_F(ReadResultRejects, StringsThatWouldReachPathsOrCode) {
  const std::vector<std::tuple<std::string, std::function<void(ojson&)>, std::string>> breakages = {
      {"a ../ commit", [](ojson& d) { d["context"]["git"]["sha"] = "../../../../../../tmp/x"; }, "context.git.sha"},
      {"a short commit", [](ojson& d) { d["context"]["git"]["sha"] = "f5c9c7b"; }, "is not a git commit"},
      {"an upper-case commit", [](ojson& d) { d["context"]["git"]["sha"] = std::string(40, 'A'); }, "context.git.sha"},
      {"a newline in the device", [](ojson& d) { d["context"]["device"] = "cpu\nimport os; os.system('id')\n#"; },
       "context.device"},
      {"an escape in the host", [](ojson& d) { d["context"]["hostname"] = "box\x1b[31m"; }, "context.hostname"},
      {"a newline in a case", [](ojson& d) { d["suites"][0]["cases"][0]["name"] = "a\nb"; }, "a case's name"},
      {"a newline in an arm", [](ojson& d) { d["suites"][0]["cases"][0]["arms"][0]["arm"] = "x\r"; }, "an arm's arm"},
      {"a tab in a suite", [](ojson& d) { d["suites"][0]["name"] = "zero\tgrad"; }, "a suite's name"},
  };
  for (const auto& [what, breakage, reason] : breakages) {
    SCOPED_TRACE(what);
    ojson doc = tipbench::to_json_document(sample_result());
    breakage(doc);
    const auto path = file_with("hostile.json", doc.dump());
    expect_throw_containing<InputError>([&] { tipbench::read_result(path); }, {path, reason});
  }
  // A repository on SHA-256 (64 digits) and a run outside git ("") are commits it takes.
  for (const std::string& sha : {std::string(64, 'a'), std::string()}) {
    ojson doc = tipbench::to_json_document(sample_result());
    doc["context"]["git"]["sha"] = sha;
    EXPECT_EQ(tipbench::read_result(file_with("fine.json", doc.dump())).context.git.sha, sha);
  }
}

}  // namespace
