// Contracts of the core library without LibTorch: the result schema (round trip, what
// read_result rejects and how), atomic result writes, MeasureSettings' JSON form, the case
// summaries and comparisons (summarize_case) on synthetic trials, and Progress' plain-line mode.
#include "tipbench/atomic_file.h"
#include "tipbench/progress.h"
#include "tipbench/result.h"
#include "tipbench/json_number.h"
#include "tipbench/settings.h"
#include "tipbench/summary.h"

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

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using tipbench::ArmResult;
using tipbench::ArmStatus;
using tipbench::CaseResult;
using tipbench::Comparison;
using tipbench::InputError;
using tipbench::MeasureSettings;
using tipbench::Result;
using tipbench::Trial;
using tipbench::stats::Verdict;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::write_bytes;

// Expects `fn` to throw exactly E (or a subclass) whose message contains every one of `needles`.
template <typename E>
void expect_throw_containing(const std::function<void()>& fn, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& n : needles) {
      EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' not in: " << what;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// A result with every part of the schema filled in, optional fields both present and absent.

Trial make_trial(int block, int position, double step_ms, std::int64_t samples, int steps) {
  Trial t;
  t.block = block;
  t.position = position;
  t.warmup_steps = 7 + block;
  t.warmup_stable = block % 2 == 0;
  t.samples_per_step = samples;
  for (int i = 0; i < steps; ++i) t.step_times_ms.push_back(step_ms * (1 + 0.001 * i) + 0.1 / 3);
  t.throughput_samples_per_s = 1000.0 * static_cast<double>(samples) / step_ms;
  return t;
}

Result sample_result() {
  Result r;
  auto& c = r.context;
  c.tipbench_version = "0.1.0";
  c.fingerprint.gpus = {tipbench::GpuInfo{0, "NVIDIA H100 80GB HBM3", "9.0", 85'045'477'376, 132}};
  c.fingerprint.driver_version = "580.95.05";
  c.fingerprint.cuda_runtime_version = "13.0";
  c.fingerprint.cuda_driver_api_version = "13.0";
  c.fingerprint.cudnn_version = "9.19.0";
  c.fingerprint.nccl_version = "2.28.9";
  c.fingerprint.libtorch_version = "2.11.0";
  c.fingerprint.cpu_model = "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz";
  c.fingerprint.cpu_cores = 208;
  c.fingerprint.os = "Ubuntu 22.04.5 LTS, Linux 6.8.0 x86_64";
  c.fingerprint.compiler = "GCC 12.2.0";
  c.fingerprint.build_type = "Release";
  c.fingerprint_slug = "nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0";
  c.git = {"0123456789abcdef0123456789abcdef01234567", true};
  c.argv = {"tipbench", "run", "--quick", "--out", "x y.json"};
  c.timestamp_utc = "2026-11-21T09:14:03Z";
  c.hostname = "gpu-node-7";
  c.device = "cuda:0";
  c.settings = tipbench::quick_settings();
  c.settings.seed = 42;
  c.warnings = {"CPU governor is powersave: set it to performance", "ünïcode \"quoted\""};

  tipbench::SuiteResult s;
  s.name = "zero_grad";
  s.description = "optimizer.zero_grad(): none vs zero";
  s.source_claim = tipbench::SourceClaim{"002", "\"moderately improves performance\" | less memory"};
  s.isolation = "in_process";
  CaseResult cr;
  cr.name = "zero_grad/model:resnet18/batch:64";
  cr.params = {{"model", "resnet18"}, {"batch", "64"}};

  ArmResult base;
  base.name = cr.name + "/arm:none";
  base.arm = "none";
  base.baseline = true;
  base.levels = {{"set_to_none", "true"}};
  base.info = {{"parameters", 11689512}, {"input_shape", {64, 3, 224, 224}}, {"note", "x"}};
  ArmResult treat = base;
  treat.name = cr.name + "/arm:zero";
  treat.arm = "zero";
  treat.baseline = false;
  treat.levels = {{"set_to_none", "false"}};
  for (int b = 0; b < 3; ++b) {
    Trial tb = make_trial(b, b % 2, 10.0 + b, 64, 5);
    tb.memory.peak_allocated_bytes = 1'000'000'000 + b;
    tb.memory.peak_reserved_bytes = 2'000'000'000'000LL + b;  // beyond 32 bits
    tb.metrics = {{"data_wait_fraction", 0.31 + 0.01 * b}, {"h2d_copy_ms", 1.9}};
    base.trials.push_back(tb);
    Trial tt = make_trial(b, 1 - b % 2, 11.0 + b, 64, 6);
    tt.memory.peak_allocated_bytes = 1'100'000'000 + b;
    tt.step_cpu_times_ms.assign(6, 21.5 + b);  // as a CPU run records them
    treat.trials.push_back(tt);
  }
  tipbench::summarize_arm(base);
  tipbench::summarize_arm(treat);
  tipbench::ArmProfile profile;
  profile.trace_file = "traces/zero_grad.model-resnet18.batch-64.arm-zero.trace.json";
  profile.steps = 5;
  profile.top_cpu_ops = {{"aten::mkldnn_convolution", 4.25, 20}, {"aten::addmm", 0.5, 1}};
  profile.top_cuda_kernels = {{"sm90_xmma_gemm", 1.125, 3}};
  treat.profile = profile;
  tipbench::ArmProfile failed_profile;
  failed_profile.steps = 5;
  failed_profile.error = "profiler unavailable";
  base.profile = failed_profile;

  ArmResult skipped;
  skipped.name = cr.name + "/arm:other";
  skipped.arm = "other";
  skipped.levels = {{"set_to_none", "maybe"}};
  skipped.status = ArmStatus::skipped;
  skipped.reason = "needs CUDA";
  ArmResult failed = skipped;
  failed.arm = "broken";
  failed.status = ArmStatus::failed;
  failed.reason = "out of memory";
  failed.trials.push_back(make_trial(0, 0, 3.0, 8, 2));  // a failing arm keeps what it measured

  cr.arms = {base, treat, skipped, failed};
  Comparison cmp;
  cmp.treatment = "zero";
  cmp.baseline = "none";
  cmp.metric = "throughput_samples_per_s";
  cmp.estimate = {0.912345678901, 0.9, 0.93, 3};
  cmp.verdict = Verdict::slower;
  cmp.cv = 0.0625;
  cmp.noisy = true;
  cmp.recommendation = "re-run with --blocks 40";
  Comparison cpu = cmp;
  cpu.metric = "step_cpu_time_ms";
  cpu.estimate = {1.05, 1.01, 1.08, 3};
  Comparison mem = cmp;
  mem.metric = "peak_allocated_bytes";
  mem.estimate = {1.1, 1.09, 1.11, 3};
  mem.verdict = Verdict::no_significant_difference;
  mem.noisy = false;
  mem.recommendation = "";
  cr.comparisons = {cmp, cpu, mem};
  s.cases.push_back(cr);

  tipbench::SuiteResult empty;  // a suite whose every case was skipped still has its row
  empty.name = "cudnn_benchmark";
  empty.description = "cudnn.benchmark off vs on";
  empty.isolation = "fresh_process";
  r.suites = {s, empty};
  return r;
}

// A valid document as text, for the tests that break it.
std::string sample_text() { return tipbench::to_json_document(sample_result()).dump(2); }

// ---------------------------------------------------------------------------------------------
// Schema round trip

TEST(ResultSchema, VersionIsMajorDotMinor) {
  EXPECT_EQ(tipbench::schema_version(), "1.4");
  EXPECT_EQ(Result{}.schema_version, tipbench::schema_version());
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
  EXPECT_EQ(arms[0].trials.at(1).metrics, (std::map<std::string, double>{{"data_wait_fraction", 0.32},
                                                                           {"h2d_copy_ms", 1.9}}));
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
}

TEST(ResultSchema, DocumentOpensWithSchemaVersionAndUsesUnitsInKeys) {
  const ojson doc = tipbench::to_json_document(sample_result());
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.begin().key(), "schema_version");
  EXPECT_EQ(doc.at("schema_version"), "1.4");
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
  doc["schema_version"] = "1.7";
  EXPECT_EQ(tipbench::parse_result(doc, "minor.json").schema_version, "1.7");
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

// ---------------------------------------------------------------------------------------------
// Atomic writes

TEST(AtomicWrite, CreatesMissingParentDirectories) {
  const auto dir = fresh_scratch_dir("atomic_parents");
  const auto path = dir / "a" / "b" / "c" / "r.json";
  tipbench::write_result_atomically(sample_result(), path.string());
  ASSERT_TRUE(fs::exists(path));
  EXPECT_NO_THROW(tipbench::read_result(path.string()));
  EXPECT_EQ(list_dir(path.parent_path()), std::vector<std::string>{"r.json"});
}

TEST(AtomicWrite, BareFileNameWritesIntoTheWorkingDirectory) {
  const auto dir = fresh_scratch_dir("atomic_bare_name");
  const auto cwd = fs::current_path();
  fs::current_path(dir);
  EXPECT_NO_THROW(tipbench::write_file_atomically("plain.txt", "hello\n"));
  fs::current_path(cwd);
  EXPECT_EQ(read_bytes(dir / "plain.txt"), "hello\n");
}

// JSON has no NaN: nlohmann would write null, a document every reader then refuses. The writer
// refuses it instead, naming where it is, and leaves the file that was there.
TEST(AtomicWrite, ANumberThatIsNotFiniteIsRefusedByNameAndNothingIsWritten) {
  const auto dir = fresh_scratch_dir("atomic_nan");
  const auto path = dir / "r.json";
  write_bytes(path, "old content\n");
  Result r = sample_result();
  r.context.settings.inject_slowdown_pct = std::numeric_limits<double>::quiet_NaN();
  try {
    tipbench::write_result_atomically(r, path.string());
    FAIL() << "wrote a NaN";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("inject_slowdown_pct"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_bytes(path), "old content\n");
  nlohmann::json j = {{"a", {1.0, 2.0}}, {"b", {{"c", std::numeric_limits<double>::infinity()}}}};
  EXPECT_EQ(tipbench::first_non_finite_number(j), "/b/c");
  j["b"]["c"] = 3.0;
  EXPECT_EQ(tipbench::first_non_finite_number(j), std::nullopt);
}

TEST(AtomicWrite, ReplacesAnExistingFileByRename) {
  const auto dir = fresh_scratch_dir("atomic_replace");
  const auto path = dir / "r.json";
  write_bytes(path, "old content\n");
  // A reader that opened the old file keeps seeing the old bytes: the new content arrives in a
  // new inode (rename), not by truncating and rewriting the old one.
  const int reader = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(reader, 0);
  struct stat before {};
  ASSERT_EQ(::fstat(reader, &before), 0);

  Result r = sample_result();
  tipbench::write_result_atomically(r, path.string());

  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  char buf[64] = {};
  const ssize_t n = ::pread(reader, buf, sizeof buf - 1, 0);
  ::close(reader);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "old content\n");

  EXPECT_EQ(tipbench::to_json_document(tipbench::read_result(path.string())), tipbench::to_json_document(r));
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"r.json"}) << "temporary file left behind";

  // And once more over a result: the second write wins.
  r.context.hostname = "second";
  tipbench::write_result_atomically(r, path.string());
  EXPECT_EQ(tipbench::read_result(path.string()).context.hostname, "second");
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"r.json"});
}

TEST(AtomicWrite, TargetThatIsADirectoryThrowsAndLeavesItAlone) {
  const auto dir = fresh_scratch_dir("atomic_target_dir");
  const auto target = dir / "taken";
  fs::create_directories(target);
  write_bytes(target / "inside.txt", "keep me");
  const auto neighbour = dir / "neighbour.json";
  write_bytes(neighbour, "neighbour bytes");
  expect_throw_containing<std::runtime_error>(
      [&] { tipbench::write_result_atomically(sample_result(), target.string()); }, {target.string()});
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(read_bytes(target / "inside.txt"), "keep me");
  EXPECT_EQ(read_bytes(neighbour), "neighbour bytes");
  EXPECT_EQ(list_dir(dir), (std::vector<std::string>{"neighbour.json", "taken"})) << "temporary file left behind";
}

TEST(AtomicWrite, ParentThatIsAFileThrowsAndLeavesItAlone) {
  const auto dir = fresh_scratch_dir("atomic_parent_file");
  const auto blocker = dir / "existing.json";
  write_bytes(blocker, "original bytes\n");
  EXPECT_THROW(tipbench::write_result_atomically(sample_result(), (blocker / "sub" / "r.json").string()),
               std::runtime_error);
  EXPECT_EQ(read_bytes(blocker), "original bytes\n");
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"existing.json"});
}

// A write that fails half-way (here: the file-size limit makes write(2) fail with EFBIG after
// the first bytes) throws, removes its temporary file and leaves the existing result untouched.
TEST(AtomicWrite, FailedWriteLeavesTheExistingFileByteIdentical) {
  const auto dir = fresh_scratch_dir("atomic_failed_write");
  const auto path = dir / "r.json";
  Result old = sample_result();
  old.context.hostname = "old";
  tipbench::write_result_atomically(old, path.string());
  const std::string before = read_bytes(path);
  ASSERT_GT(before.size(), 2000u);

  Result bigger = sample_result();
  bigger.suites[0].cases[0].arms[0].trials[0].step_times_ms.assign(5000, 1.2345678901234);

  rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  std::string message;
  try {
    tipbench::write_result_atomically(bigger, path.string());
  } catch (const std::runtime_error& e) {
    threw = true;
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_TRUE(threw);
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"r.json"}) << "temporary file left behind";
}

TEST(AtomicWrite, UnwritableDirectoryThrowsAndLeavesTheExistingFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: directory permissions do not stop writes";
  const auto dir = fresh_scratch_dir("atomic_read_only");
  const auto path = dir / "r.json";
  write_bytes(path, "original bytes\n");
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  EXPECT_THROW(tipbench::write_result_atomically(sample_result(), path.string()), std::runtime_error);
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(read_bytes(path), "original bytes\n");
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"r.json"});
}

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
  s.blocks = 13;
  s.practical_threshold = 0.035;
  s.bootstrap_resamples = 4321;
  s.seed = std::numeric_limits<std::uint64_t>::max() - 5;  // beyond int64
  s.inject_slowdown_pct = 7.5;
  s.profile_dir = "traces/run 1";
  s.profile_steps = 3;
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
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.practical_threshold, b.practical_threshold);
  EXPECT_EQ(a.bootstrap_resamples, b.bootstrap_resamples);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.inject_slowdown_pct, b.inject_slowdown_pct);
  EXPECT_EQ(a.profile_dir, b.profile_dir);
  EXPECT_EQ(a.profile_steps, b.profile_steps);
}

TEST(MeasureSettingsJson, RoundTripsEveryField) {
  const MeasureSettings s = unusual_settings();
  const nlohmann::json j = s;
  EXPECT_EQ(j.size(), 15u);
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
  expect_throw_containing<std::invalid_argument>([&] { (void)j.get<MeasureSettings>(); },
                                                 {"blocks_per_second"});
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

// ---------------------------------------------------------------------------------------------
// summarize_case on synthetic trials

// Lognormal multiplicative noise with median 1 and coefficient of variation cv, from our own
// Box-Muller draw so the data do not depend on the standard library's distributions.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : rng_(seed) {}
  double factor(double cv) {
    if (cv == 0) return 1;
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    const double sigma = std::sqrt(std::log1p(cv * cv));
    return std::exp(sigma * z);
  }

 private:
  std::mt19937_64 rng_;
};

ArmResult synthetic_arm(const std::string& arm, bool baseline, const std::vector<int>& blocks,
                        double throughput, double cv, Noise& noise,
                        std::optional<std::int64_t> rss = std::nullopt) {
  ArmResult a;
  a.arm = arm;
  a.name = "suite/model:m/arm:" + arm;
  a.baseline = baseline;
  for (int b : blocks) {
    Trial t;
    t.block = b;
    t.samples_per_step = 32;
    t.throughput_samples_per_s = throughput * noise.factor(cv);
    const double step_ms = 1000.0 * 32 / t.throughput_samples_per_s;
    t.step_times_ms.assign(20, step_ms);
    if (rss) t.memory.peak_rss_growth_bytes = *rss;
    a.trials.push_back(std::move(t));
  }
  return a;
}

std::vector<int> blocks_upto(int n) {
  std::vector<int> out;
  for (int b = 0; b < n; ++b) out.push_back(b);
  return out;
}

const Comparison* find_comparison(const CaseResult& c, const std::string& metric) {
  for (const auto& cmp : c.comparisons) {
    if (cmp.metric == metric) return &cmp;
  }
  return nullptr;
}

MeasureSettings summary_settings() {
  MeasureSettings s;
  s.seed = 7;
  return s;
}

TEST(SummarizeCase, PlantedTenPercentSlowdownIsSlower) {
  Noise noise(1);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("treat", false, blocks_upto(10), 900, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);  // no memory figures, so no memory comparison
  const Comparison& cmp = c.comparisons[0];
  EXPECT_EQ(cmp.treatment, "treat");
  EXPECT_EQ(cmp.baseline, "base");
  EXPECT_EQ(cmp.metric, "throughput_samples_per_s");
  EXPECT_NEAR(cmp.estimate.ratio, 0.9, 0.01);
  EXPECT_LT(cmp.estimate.ci_low, cmp.estimate.ratio);
  EXPECT_GT(cmp.estimate.ci_high, cmp.estimate.ratio);
  EXPECT_LT(cmp.estimate.ci_high, 1.0);
  EXPECT_EQ(cmp.estimate.blocks, 10u);
  EXPECT_EQ(cmp.verdict, Verdict::slower);
  EXPECT_FALSE(cmp.noisy);
  EXPECT_TRUE(cmp.recommendation.empty());

  // Arm summaries are filled in too.
  EXPECT_EQ(c.arms[0].throughput_samples_per_s.n, 10u);
  EXPECT_NEAR(c.arms[0].throughput_samples_per_s.median, 1000, 10);
  EXPECT_NEAR(c.arms[1].throughput_samples_per_s.median, 900, 9);
  EXPECT_EQ(c.arms[1].step_time_ms.n, 200u);
  EXPECT_NEAR(c.arms[1].step_time_ms.median, 1000.0 * 32 / 900, 0.5);
  EXPECT_FALSE(c.arms[0].peak_memory_bytes.has_value());
}

TEST(SummarizeCase, PlantedSpeedupIsFaster) {
  Noise noise(2);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("treat", false, blocks_upto(10), 1100, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_NEAR(c.comparisons[0].estimate.ratio, 1.1, 0.011);
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::faster);
}

TEST(SummarizeCase, IdenticalArmsShowNoSignificantDifference) {
  Noise noise(3);
  CaseResult c;
  ArmResult base = synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise);
  ArmResult same = base;
  same.arm = "same";
  same.baseline = false;
  c.arms = {base, same};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_DOUBLE_EQ(c.comparisons[0].estimate.ratio, 1.0);
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::no_significant_difference);
  EXPECT_FALSE(c.comparisons[0].noisy);
}

TEST(SummarizeCase, AaArmsWithIndependentNoiseShowNoSignificantDifference) {
  for (std::uint64_t seed = 10; seed < 30; ++seed) {
    SCOPED_TRACE(seed);
    Noise noise(seed);
    CaseResult c;
    c.arms = {synthetic_arm("a", true, blocks_upto(10), 1000, 0.004, noise),
              synthetic_arm("b", false, blocks_upto(10), 1000, 0.004, noise)};
    tipbench::summarize_case(c, summary_settings());
    ASSERT_EQ(c.comparisons.size(), 1u);
    EXPECT_NEAR(c.comparisons[0].estimate.ratio, 1.0, 0.01);
    EXPECT_EQ(c.comparisons[0].verdict, Verdict::no_significant_difference);
  }
}

TEST(SummarizeCase, NoisyArmsAreMarkedWithTheFix) {
  Noise noise(4);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.10, noise),
            synthetic_arm("treat", false, blocks_upto(10), 1000, 0.10, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  const Comparison& cmp = c.comparisons[0];
  EXPECT_TRUE(cmp.noisy);
  EXPECT_NE(cmp.recommendation.find("--blocks"), std::string::npos) << cmp.recommendation;
  // The recommended block count is more than what was run (it would not be a fix otherwise).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cmp.recommendation, m, std::regex("--blocks (\\d+)"))) << cmp.recommendation;
  EXPECT_GT(std::stoi(m[1]), 10) << cmp.recommendation;
  // Noise never makes an A/A difference significant here.
  EXPECT_EQ(cmp.verdict, Verdict::no_significant_difference);
}

TEST(SummarizeCase, NoisyLimitFollowsThePracticalThreshold) {
  // CV about 2%: noisy under the default 2% threshold (limit 1%), fine under 10% (limit 5%).
  Noise n1(5), n2(5);
  CaseResult strict, lenient;
  strict.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.02, n1),
                 synthetic_arm("treat", false, blocks_upto(10), 1000, 0.02, n1)};
  lenient.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.02, n2),
                  synthetic_arm("treat", false, blocks_upto(10), 1000, 0.02, n2)};
  MeasureSettings lenient_settings = summary_settings();
  lenient_settings.practical_threshold = 0.10;
  tipbench::summarize_case(strict, summary_settings());
  tipbench::summarize_case(lenient, lenient_settings);
  ASSERT_EQ(strict.comparisons.size(), 1u);
  ASSERT_EQ(lenient.comparisons.size(), 1u);
  EXPECT_TRUE(strict.comparisons[0].noisy);
  EXPECT_FALSE(lenient.comparisons[0].noisy);
  EXPECT_TRUE(lenient.comparisons[0].recommendation.empty());
}

TEST(SummarizeCase, UnpairedBlocksAreDropped) {
  Noise noise(6);
  CaseResult c;
  // The treatment misses blocks 3 and 7 and has a block 12 the baseline never ran.
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("treat", false, {0, 1, 2, 4, 5, 6, 8, 9, 12}, 900, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_EQ(c.comparisons[0].estimate.blocks, 8u);
  EXPECT_NEAR(c.comparisons[0].estimate.ratio, 0.9, 0.01);
  // The arm's own summary still covers all of its trials.
  EXPECT_EQ(c.arms[1].throughput_samples_per_s.n, 9u);
}

TEST(SummarizeCase, PairingIsByBlockNotByOrder) {
  // Block b of the baseline has throughput 1000 * (1 + b); the treatment's block b is exactly 0.9
  // of it, but its trials are stored in reverse order. Pairing by position would mix blocks.
  CaseResult c;
  ArmResult base, treat;
  base.arm = "base";
  base.baseline = true;
  treat.arm = "treat";
  for (int b = 0; b < 8; ++b) {
    Trial t;
    t.block = b;
    t.throughput_samples_per_s = 1000.0 * (1 + b);
    t.step_times_ms = {1.0};
    base.trials.push_back(t);
  }
  for (int b = 7; b >= 0; --b) {
    Trial t;
    t.block = b;
    t.throughput_samples_per_s = 900.0 * (1 + b);
    t.step_times_ms = {1.0};
    treat.trials.push_back(t);
  }
  c.arms = {base, treat};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_NEAR(c.comparisons[0].estimate.ratio, 0.9, 1e-12);
  EXPECT_NEAR(c.comparisons[0].estimate.ci_low, 0.9, 1e-12);
  EXPECT_NEAR(c.comparisons[0].estimate.ci_high, 0.9, 1e-12);
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::slower);
}

TEST(SummarizeCase, SkippedBaselineMeansNoComparisons) {
  Noise noise(7);
  CaseResult c;
  ArmResult base = synthetic_arm("base", true, {}, 1000, 0.003, noise);
  base.status = ArmStatus::skipped;
  base.reason = "needs CUDA";
  c.arms = {base, synthetic_arm("treat", false, blocks_upto(10), 900, 0.003, noise)};
  c.comparisons.push_back(Comparison{});  // stale comparisons from an earlier call go away
  tipbench::summarize_case(c, summary_settings());
  EXPECT_TRUE(c.comparisons.empty());
  EXPECT_EQ(c.arms[1].throughput_samples_per_s.n, 10u);  // the treatment is still summarized
}

TEST(SummarizeCase, FailedOrSkippedTreatmentsAreNotCompared) {
  Noise noise(8);
  CaseResult c;
  ArmResult failed = synthetic_arm("failed", false, blocks_upto(10), 500, 0.003, noise);
  failed.status = ArmStatus::failed;
  ArmResult skipped = synthetic_arm("skipped", false, {}, 500, 0.003, noise);
  skipped.status = ArmStatus::skipped;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise), failed, skipped,
            synthetic_arm("ok", false, blocks_upto(10), 1000, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_EQ(c.comparisons[0].treatment, "ok");
}

TEST(SummarizeCase, EveryTreatmentIsComparedWithTheBaseline) {
  Noise noise(9);
  CaseResult c;
  // The baseline need not come first in the list: it is the arm flagged baseline.
  c.arms = {synthetic_arm("slow", false, blocks_upto(10), 800, 0.003, noise),
            synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("fast", false, blocks_upto(10), 1250, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 2u);
  EXPECT_EQ(c.comparisons[0].treatment, "slow");
  EXPECT_EQ(c.comparisons[0].baseline, "base");
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::slower);
  EXPECT_EQ(c.comparisons[1].treatment, "fast");
  EXPECT_EQ(c.comparisons[1].verdict, Verdict::faster);
}

TEST(SummarizeCase, MemoryIsComparedWhereTrialsRecordIt) {
  Noise noise(10);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise, 100'000'000),
            synthetic_arm("treat", false, blocks_upto(10), 1000, 0.003, noise, 80'000'000)};
  tipbench::summarize_case(c, summary_settings());
  EXPECT_EQ(c.arms[0].peak_memory_bytes, 100'000'000);
  EXPECT_EQ(c.arms[0].memory_metric, "peak_rss_growth_bytes");
  ASSERT_EQ(c.comparisons.size(), 2u);
  ASSERT_NE(find_comparison(c, "throughput_samples_per_s"), nullptr);
  const Comparison* mem = find_comparison(c, "peak_rss_growth_bytes");
  ASSERT_NE(mem, nullptr);
  EXPECT_DOUBLE_EQ(mem->estimate.ratio, 0.8);
  // Lower is better for memory: 20% less is the good direction ("faster" is the better verdict).
  EXPECT_EQ(mem->verdict, Verdict::faster);
}

TEST(SummarizeCase, WorkloadMetricsAreSummarizedPerArm) {
  Noise noise(12);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(4), 1000, 0.003, noise),
            synthetic_arm("treat", false, blocks_upto(4), 1000, 0.003, noise)};
  for (int b = 0; b < 4; ++b) c.arms[0].trials[b].metrics["data_wait_fraction"] = 0.1 * (b + 1);
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.arms[0].metrics.size(), 1u);
  const auto& s = c.arms[0].metrics.at("data_wait_fraction");
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_TRUE(c.arms[1].metrics.empty());
}

TEST(SummarizeCase, SummaryIsDeterministicForASeed) {
  auto run = [] {
    Noise noise(11);
    CaseResult c;
    c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.02, noise),
              synthetic_arm("treat", false, blocks_upto(10), 970, 0.02, noise)};
    tipbench::summarize_case(c, summary_settings());
    return c.comparisons.at(0).estimate;
  };
  const auto a = run();
  const auto b = run();
  EXPECT_EQ(a.ratio, b.ratio);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.ci_high, b.ci_high);
}

// ---------------------------------------------------------------------------------------------
// Progress

std::string drive_progress(bool tty) {
  std::FILE* f = std::tmpfile();
  EXPECT_NE(f, nullptr);
  {
    tipbench::Progress p(tty, f);
    p.begin(3);
    p.trial_started("zero_grad", "model:small_cnn arm:zero", 0, 2);
    p.trial_finished(1.5);
    p.note("skipped: cudnn_benchmark/arm:on: needs CUDA");
    p.trial_started("zero_grad", "model:small_cnn arm:none", 0, 2);
    p.trial_finished(2.5);
    p.trial_started("zero_grad", "model:small_cnn arm:zero", 1, 2);
    p.trial_finished(2.0);
    p.end();
  }
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char buf[256];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  std::fclose(f);
  return text;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  EXPECT_EQ(start, text.size()) << "output does not end with a newline";
  return lines;
}

TEST(Progress, PlainModeWritesOneLinePerEvent) {
  const std::string text = drive_progress(/*tty=*/false);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\033'), std::string::npos) << text;
  const auto lines = split_lines(text);
  ASSERT_EQ(lines.size(), 4u) << text;
  EXPECT_EQ(lines[0], "[1/3] zero_grad model:small_cnn arm:zero block 1/2 done in 1.5s  ETA 0:03");
  EXPECT_EQ(lines[1], "skipped: cudnn_benchmark/arm:on: needs CUDA");
  EXPECT_EQ(lines[2], "[2/3] zero_grad model:small_cnn arm:none block 1/2 done in 2.5s  ETA 0:02");
  EXPECT_EQ(lines[3], "[3/3] zero_grad model:small_cnn arm:zero block 2/2 done in 2.0s");
}

TEST(Progress, TerminalModeRewritesOneStatusLine) {
  const std::string text = drive_progress(/*tty=*/true);
  EXPECT_NE(text.find("\r\033[K[1/3] zero_grad"), std::string::npos) << text;
  EXPECT_NE(text.find("\r\033[K[3/3] zero_grad model:small_cnn arm:zero block 2/2"), std::string::npos);
  // The note clears the status line and stands on a line of its own.
  EXPECT_NE(text.find("\r\033[Kskipped: cudnn_benchmark/arm:on: needs CUDA\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("done in"), std::string::npos);
  // end() leaves the terminal on a clean line.
  EXPECT_TRUE(text.ends_with("\r\033[K")) << text;
}

}  // namespace
