// Work that survives: a real run (the binary, two suites of one case each) stopped after its
// first case by SIGINT, SIGTERM or kill -9 keeps that case in <out>.partial and says so;
// `run --resume` measures only the rest and writes the result the run would have written; a
// resume with other options or of another machine's run is refused (exit 2).
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/partial_run.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "running_child.h"
#include "scratch_dir.h"
#include "test_paths.h"
#include "text_match.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#ifndef TIPBENCH_BINARY
#error "TIPBENCH_BINARY must name the tipbench executable (tests/cli/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::RunningChild;
using tipbench::testing::write_bytes;

// Two suites of one case each on the small CNN; zero_grad (the first case) takes a few seconds,
// conv_bias (the second) about as long, so a signal sent once the partial file appears lands
// in the second case.
std::vector<std::string> two_case_run(const fs::path& out) {
  return {TIPBENCH_BINARY, "run",     "--suite",  "zero_grad", "--suite", "conv_bias", "--device",
          "cpu",           "--quick", "--blocks", "3",         "--out",   out.string()};
}

// The partial file as it is now, when it can be read (it is replaced atomically, block by block).
std::optional<tipbench::PartialRun> partial_now(const fs::path& path) {
  try {
    if (fs::exists(path)) return tipbench::read_partial_run(path.string());
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Starts the run, waits for its first case to be kept (the file holds the blocks of a case in
// progress before that), then sends `signal_number`.
void interrupt_after_first_case(const fs::path& dir, const fs::path& logs, int signal_number) {
  const auto out = dir / "r.json";
  RunningChild child(two_case_run(out), logs);
  ASSERT_TRUE(child.started());
  ASSERT_TRUE(child.wait_until(
      [&] {
        const auto p = partial_now(dir / "r.json.partial");
        return p && tipbench::count_cases(p->result) == 1;
      },
      std::chrono::seconds(300)))
      << child.describe();
  ASSERT_EQ(::kill(child.pid(), signal_number), 0);
  ASSERT_TRUE(child.wait(std::chrono::seconds(60))) << "did not stop\n" << child.describe();
  ASSERT_TRUE(child.signaled()) << child.describe();
  EXPECT_EQ(child.signal(), signal_number);
  if (signal_number != SIGKILL) {
    EXPECT_TRUE(contains(child.stderr_text(), "interrupted: 1 case(s)")) << child.describe();
    EXPECT_TRUE(contains(child.stderr_text(), "kept in " + (dir / "r.json.partial").string())) << child.describe();
    EXPECT_TRUE(contains(child.stderr_text(), "tipbench run --resume")) << child.describe();
  }
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"r.json.partial"}) << "no result, no temporary file";
}

tipbench::testing::ChildOutcome resume(const fs::path& dir, const fs::path& logs, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{TIPBENCH_BINARY, "run", "--resume", (dir / "r.json.partial").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return tipbench::testing::run_child(args, logs / "resume.out", logs / "resume.err");
}

void expect_resumed_result(const fs::path& dir, const tipbench::PartialRun& kept) {
  ASSERT_TRUE(fs::exists(dir / "r.json"));
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"r.json"}) << "the partial file is removed";
  const auto r = tipbench::read_result((dir / "r.json").string());
  ASSERT_EQ(r.suites.size(), 2u);
  EXPECT_EQ(r.suites[0].name, "zero_grad");
  EXPECT_EQ(r.suites[1].name, "conv_bias");
  // The kept case is taken byte for byte; the other was measured now, completely.
  const auto doc = tipbench::to_json_document(r);
  EXPECT_EQ(doc.at("suites").at(0).at("cases").at(0),
            tipbench::to_json_document(kept.result).at("suites").at(0).at("cases").at(0));
  for (const auto& arm : r.suites[1].cases.at(0).arms) {
    EXPECT_EQ(arm.status, tipbench::ArmStatus::ok) << arm.reason;
    EXPECT_EQ(arm.trials.size(), 3u);
  }
  EXPECT_FALSE(r.suites[1].cases.at(0).comparisons.empty());
  // The run's own context: its start and argv, plus a warning that it was resumed.
  EXPECT_EQ(r.context.timestamp_utc, kept.result.context.timestamp_utc);
  EXPECT_EQ(r.context.argv, kept.result.context.argv);
  bool warned = false;
  for (const auto& w : r.context.warnings) warned = warned || contains(w, "resumed at");
  EXPECT_TRUE(warned);
}

// Before it is finished, what the run kept can be read: compare and report show its finished case
// with a warning that it is partial; a baseline, a whole run by definition, refuses it.
// The partial file is left as it was.
void expect_partial_shown_not_stored(const fs::path& dir, const fs::path& logs) {
  const auto partial = (dir / "r.json.partial").string();
  const std::string before = read_bytes(partial);
  auto o = tipbench::testing::run_child({TIPBENCH_BINARY, "compare", partial, partial, "--format", "markdown"},
                                        logs / "compare.out", logs / "compare.err");
  EXPECT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.out, "zero_grad/model:small_cnn")) << o.out;
  EXPECT_FALSE(contains(o.out, "conv_bias")) << "the case it did not reach is not invented\n" << o.out;
  EXPECT_TRUE(contains(o.out, "> A: warning: " + partial + " is a partial run: the 1 case(s)")) << o.out;

  const auto report = logs / "report";
  o = tipbench::testing::run_child({TIPBENCH_BINARY, "report", partial, "--out", report.string()}, logs / "report.out",
                                   logs / "report.err");
  EXPECT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(read_bytes(report / "report.html"), "is a partial run: the 1 case(s)"));

  o = tipbench::testing::run_child(
      {TIPBENCH_BINARY, "baseline", "--dir", (logs / "baselines").string(), "save", partial}, logs / "save.out",
      logs / "save.err");
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "tipbench run --resume " + partial)) << o.err;
  if (fs::exists(logs / "baselines")) {
    for (const auto& e : fs::recursive_directory_iterator(logs / "baselines")) {
      EXPECT_FALSE(e.is_regular_file()) << "stored: " << e.path();
    }
  }
  EXPECT_EQ(read_bytes(partial), before);
}

TEST(RunResume, SigintKeepsTheFinishedCaseAndResumeFinishesTheRun) {
  const auto dir = fresh_scratch_dir("resume_sigint");
  const auto logs = fresh_scratch_dir("resume_sigint_logs");
  interrupt_after_first_case(dir, logs, SIGINT);
  if (HasFatalFailure()) return;
  const auto kept = tipbench::read_partial_run((dir / "r.json.partial").string());
  ASSERT_EQ(tipbench::count_cases(kept.result), 1);
  EXPECT_EQ(kept.out, (dir / "r.json").string());

  // Other options than the run's: refused, the partial file untouched.
  const std::string before = read_bytes(dir / "r.json.partial");
  auto o = resume(dir, logs, {"--blocks", "5"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "--blocks: 5 here, 3 in the partial run")) << o.err;
  EXPECT_EQ(read_bytes(dir / "r.json.partial"), before);

  o = resume(dir, logs);
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.err, "resuming")) << o.err;
  expect_resumed_result(dir, kept);
}

TEST(RunResume, SigtermKeepsTheFinishedCaseToo) {
  const auto dir = fresh_scratch_dir("resume_sigterm");
  const auto logs = fresh_scratch_dir("resume_sigterm_logs");
  interrupt_after_first_case(dir, logs, SIGTERM);
  if (HasFatalFailure()) return;
  const auto kept = tipbench::read_partial_run((dir / "r.json.partial").string());
  expect_partial_shown_not_stored(dir, logs);
  // The same options typed again with --resume are accepted.
  const auto o = resume(
      dir, logs, {"--suite", "zero_grad", "--suite", "conv_bias", "--device", "cpu", "--quick", "--blocks", "3"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  expect_resumed_result(dir, kept);
}

TEST(RunResume, KillNineLeavesTheFinishedCaseOnDisk) {
  const auto dir = fresh_scratch_dir("resume_kill9");
  const auto logs = fresh_scratch_dir("resume_kill9_logs");
  interrupt_after_first_case(dir, logs, SIGKILL);
  if (HasFatalFailure()) return;
  const auto kept = tipbench::read_partial_run((dir / "r.json.partial").string());
  EXPECT_EQ(tipbench::count_cases(kept.result), 1);

  // A partial file of another machine: refused, named.
  auto doc = nlohmann::json::parse(read_bytes(dir / "r.json.partial"));
  doc["result"]["context"]["fingerprint_slug"] = "nvidia-h100_cuda13.0_torch2.11.0";
  write_bytes(dir / "other.partial", doc.dump());
  auto o = tipbench::testing::run_child({TIPBENCH_BINARY, "run", "--resume", (dir / "other.partial").string()},
                                        logs / "o.out", logs / "o.err");
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "measured elsewhere")) << o.err;
  EXPECT_TRUE(contains(o.err, "nvidia-h100_cuda13.0_torch2.11.0")) << o.err;
  fs::remove(dir / "other.partial");

  // Paths a partial file records outside this folder and its own: refused before anything is
  // loaded or written, unless this command line gives them too.
  const auto foreign = fs::path("/") / "tipbench-foreign-folder";
  for (const auto& [key, path, flag] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"out", (foreign / "x.json").string(), "--out"},
           {"model_file", (foreign / "evil.pt").string(), "--model-file"},
           {"profile_dir", (foreign / "traces").string(), "--profile"}}) {
    auto hostile = nlohmann::json::parse(read_bytes(dir / "r.json.partial"));
    hostile["run_options"][key] = path;
    write_bytes(dir / "foreign.partial", hostile.dump());
    o = tipbench::testing::run_child({TIPBENCH_BINARY, "run", "--resume", (dir / "foreign.partial").string()},
                                     logs / "o.out", logs / "o.err");
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
    EXPECT_TRUE(contains(o.err, "it records " + flag + " " + path + ", outside this folder")) << o.err;
    EXPECT_FALSE(fs::exists(foreign));
  }
  fs::remove(dir / "foreign.partial");

  // The same --out again without --resume: refused while the partial file holds finished cases
  // (a requeued job must not lose them), unless --force says to start anew.
  const std::vector<std::string> again{
      TIPBENCH_BINARY, "run", "--suite", "zero_grad", "--quick", "--out", (dir / "r.json").string(), "--dry-run"};
  o = tipbench::testing::run_child(again, logs / "o.out", logs / "o.err");
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "holds the finished cases of an interrupted run")) << o.err;
  auto forced = again;
  forced.push_back("--force");
  o = tipbench::testing::run_child(forced, logs / "o.out", logs / "o.err");
  EXPECT_EQ(o.code, tipbench::exit_code::ok) << o.err;

  // Not a partial file at all.
  write_bytes(dir / "result.json", "{\"schema_version\": \"1.1\"}");
  o = tipbench::testing::run_child({TIPBENCH_BINARY, "run", "--resume", (dir / "result.json").string()}, logs / "o.out",
                                   logs / "o.err");
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "not a partial run file")) << o.err;
  fs::remove(dir / "result.json");

  // Options a command line could not have given, or that disagree with the settings the kept
  // case was measured with: refused by name before anything runs, and the file is kept.
  const auto original = nlohmann::json::parse(read_bytes(dir / "r.json.partial"));
  for (const auto& [pointer, value, says] : std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"/run_options/suites", {"zero_grad", "no_such_suite"}, "'no_such_suite' is not a suite"},
           {"/run_options/blocks", -5, "--blocks: -5"},
           {"/run_options/threshold_pct", -3, "--threshold"},
           {"/run_options/suite_options/bucket-mb", "nan", "--bucket-mb"},
           {"/run_options/blocks", 4, "disagree with the settings its result recorded"}}) {
    SCOPED_TRACE(pointer);
    auto damaged = original;
    damaged[nlohmann::json::json_pointer(pointer)] = value;
    write_bytes(dir / "damaged.partial", damaged.dump());
    o = tipbench::testing::run_child({TIPBENCH_BINARY, "run", "--resume", (dir / "damaged.partial").string()},
                                     logs / "o.out", logs / "o.err");
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
    EXPECT_TRUE(contains(o.err, says)) << o.err;
    EXPECT_TRUE(fs::exists(dir / "damaged.partial")) << "a refused resume keeps the file";
    EXPECT_FALSE(fs::exists(dir / "r.json"));
  }
  fs::remove(dir / "damaged.partial");

  // A flag given with --resume is compared only with itself: --quick agrees with the run.
  o = resume(dir, logs, {"--quick"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  expect_resumed_result(dir, kept);
}

// A case interrupted after some of its blocks keeps them: `--resume` runs only the blocks it
// lacks, and the case's trials are the kept ones followed by the new ones (one case to the
// statistics). The run is zero_grad alone, a fixed 6 blocks, so the signal lands inside its case.
TEST(RunResume, AnInterruptedCaseKeepsItsBlocksAndResumeRunsTheRest) {
  const auto dir = fresh_scratch_dir("resume_blocks");
  const auto logs = fresh_scratch_dir("resume_blocks_logs");
  const auto partial = dir / "r.json.partial";
  RunningChild child({TIPBENCH_BINARY, "run", "--suite", "zero_grad", "--model", "small_cnn", "--device", "cpu",
                      "--quick", "--blocks", "6", "--out", (dir / "r.json").string()},
                     logs);
  ASSERT_TRUE(child.started());
  ASSERT_TRUE(child.wait_until(
      [&] {
        const auto p = partial_now(partial);
        return p && p->in_progress && p->in_progress->blocks_done >= 2;
      },
      std::chrono::seconds(300)))
      << child.describe();
  ASSERT_EQ(::kill(child.pid(), SIGINT), 0);
  ASSERT_TRUE(child.wait(std::chrono::seconds(60))) << child.describe();
  EXPECT_TRUE(contains(child.stderr_text(), "block(s) of zero_grad/")) << child.describe();
  const auto kept = partial_now(partial);
  ASSERT_TRUE(kept && kept->in_progress) << read_bytes(partial);
  const int done = kept->in_progress->blocks_done;
  ASSERT_LT(done, 6) << "the signal came after the case ended";

  const auto o = resume(dir, logs);
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.err, "block(s) of zero_grad/")) << o.err;
  const auto r = tipbench::read_result((dir / "r.json").string());
  const auto& c = r.suites.at(0).cases.at(0);
  for (std::size_t a = 0; a < c.arms.size(); ++a) {
    const auto& arm = c.arms[a];
    ASSERT_EQ(arm.trials.size(), 6u) << arm.name;
    const auto& before = kept->in_progress->case_result.arms.at(a).trials;
    ASSERT_EQ(before.size(), static_cast<std::size_t>(done)) << arm.name;
    for (int b = 0; b < 6; ++b) EXPECT_EQ(arm.trials[b].block, b) << arm.name;
    for (int b = 0; b < done; ++b) {
      EXPECT_EQ(tipbench::trial_to_json(arm.trials[b]), tipbench::trial_to_json(before[b])) << "kept as measured";
    }
  }
  EXPECT_FALSE(c.comparisons.empty());
  EXPECT_EQ(c.comparisons.front().estimate.blocks, 6u);
}

}  // namespace
