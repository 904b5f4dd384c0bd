// The partial run file that keeps an interrupted run's finished cases (round trip, refusal of
// anything else, atomic rewrite) and the notice a run prints when SIGINT/SIGTERM stops it.
#include "tipbench/processes/interrupt_notice.h"
#include "tipbench/results/partial_run.h"

#include "scratch_dir.h"
#include "synthetic.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace {

using tipbench::InputError;
using tipbench::PartialRun;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::write_bytes;

PartialRun sample_partial() {
  return {.out = "results/runs/x.json",
          .run_options = {{"blocks", 3}, {"suites", {"zero_grad"}}},
          .result = tipbench::testing::synthetic_run(
              {.suites = {"zero_grad", "conv_bias"}, .cases_per_suite = 2, .blocks = 3}),
          .in_progress = std::nullopt};
}

std::string error_of(const std::string& path) {
  try {
    tipbench::read_partial_run(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PartialRun, RoundTripsOutOptionsAndTheFinishedCases) {
  const auto dir = fresh_scratch_dir("partial_roundtrip");
  const auto path = (dir / "x.json.partial").string();
  const PartialRun written = sample_partial();
  tipbench::write_partial_run(written, path);
  const PartialRun read = tipbench::read_partial_run(path);
  EXPECT_EQ(read.out, written.out);
  EXPECT_EQ(read.run_options, written.run_options);
  EXPECT_EQ(tipbench::to_json_document(read.result), tipbench::to_json_document(written.result));
  EXPECT_EQ(tipbench::count_cases(read.result), 4);
  // Rewritten in place, atomically: one file, no temporary left beside it.
  tipbench::write_partial_run(written, path);
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"x.json.partial"});
}

// The blocks of the case in progress: kept as they were, and refused when they claim more
// blocks than they hold or trials of blocks not yet finished.
TEST(PartialRun, KeepsTheFinishedBlocksOfTheCaseInProgress) {
  const auto dir = fresh_scratch_dir("partial_in_progress");
  const auto path = (dir / "x.json.partial").string();
  PartialRun written = sample_partial();
  const auto unfinished = tipbench::testing::synthetic_run({.suites = {"amp"}, .cases_per_suite = 1, .blocks = 2});
  written.in_progress = tipbench::CaseInProgress{"amp", unfinished.suites.at(0).cases.at(0), 2};
  tipbench::write_partial_run(written, path);
  const PartialRun read = tipbench::read_partial_run(path);
  ASSERT_TRUE(read.in_progress.has_value());
  EXPECT_EQ(read.in_progress->suite, "amp");
  EXPECT_EQ(read.in_progress->blocks_done, 2);
  EXPECT_EQ(tipbench::case_document(read.in_progress->case_result),
            tipbench::case_document(written.in_progress->case_result));
  EXPECT_EQ(tipbench::count_cases(read.result), 4) << "the case in progress is not a finished case";
  EXPECT_FALSE(tipbench::read_partial_run(path).result.suites.empty());

  auto doc = nlohmann::json::parse(read_bytes(path));
  doc["case_in_progress"]["blocks_done"] = 1;  // block 1's trials are in it
  write_bytes(path, doc.dump());
  EXPECT_NE(error_of(path).find("its case in progress"), std::string::npos) << error_of(path);
  doc["case_in_progress"]["blocks_done"] = 3;  // more blocks than its arms ran
  write_bytes(path, doc.dump());
  EXPECT_NE(error_of(path).find("trial(s) in 3 finished block(s)"), std::string::npos) << error_of(path);
  doc["case_in_progress"]["blocks_done"] = 0;
  write_bytes(path, doc.dump());
  EXPECT_NE(error_of(path).find("blocks_done must be at least 1"), std::string::npos) << error_of(path);
}

TEST(PartialRun, PathIsBesideTheResult) {
  EXPECT_EQ(tipbench::partial_path_for("results/runs/x.json"), "results/runs/x.json.partial");
}

TEST(PartialRun, AnythingElseIsAnInputErrorNamingTheFile) {
  const auto dir = fresh_scratch_dir("partial_rejects");
  const auto missing = (dir / "missing.partial").string();
  EXPECT_NE(error_of(missing).find(missing), std::string::npos);

  const auto path = (dir / "p.partial").string();
  tipbench::write_partial_run(sample_partial(), path);
  const std::string good = read_bytes(path);

  write_bytes(path, good.substr(0, good.size() / 2));  // truncated
  EXPECT_NE(error_of(path).find("not valid JSON"), std::string::npos) << error_of(path);

  // A finished result is not a partial run file.
  write_bytes(path, tipbench::to_json_document(sample_partial().result).dump());
  EXPECT_NE(error_of(path).find("not a partial run file"), std::string::npos) << error_of(path);

  auto doc = nlohmann::json::parse(good);
  doc["tipbench_partial_run"] = 99;
  write_bytes(path, doc.dump());
  EXPECT_NE(error_of(path).find("format 99"), std::string::npos) << error_of(path);

  doc = nlohmann::json::parse(good);
  doc["result"]["suites"] = "no";
  write_bytes(path, doc.dump());
  EXPECT_NE(error_of(path).find("does not match result schema"), std::string::npos) << error_of(path);

  doc = nlohmann::json::parse(good);
  doc.erase("out");
  write_bytes(path, doc.dump());
  EXPECT_NE(error_of(path).find("damaged"), std::string::npos) << error_of(path);
}

// compare and report read what an interrupted run kept: its finished cases, warned as partial;
// read_result, which baselines, gate and history use, refuses the file and says how to finish it.
TEST(PartialRun, ReadersThatShowRunsTakeTheFinishedCasesWithAWarning) {
  const auto dir = fresh_scratch_dir("partial_as_result");
  const auto path = (dir / "x.json.partial").string();
  const PartialRun written = sample_partial();
  tipbench::write_partial_run(written, path);

  const tipbench::Result read = tipbench::read_result_or_partial(path);
  EXPECT_EQ(tipbench::to_json_document(read).at("suites"), tipbench::to_json_document(written.result).at("suites"));
  ASSERT_EQ(read.context.warnings.size(), written.result.context.warnings.size() + 1);
  const std::string& warning = read.context.warnings.back();
  EXPECT_NE(warning.find(path + " is a partial run: the 4 case(s)"), std::string::npos) << warning;
  EXPECT_NE(warning.find("tipbench run --resume " + path), std::string::npos) << warning;

  try {
    tipbench::read_result(path);
    ADD_FAILURE() << "read_result took a partial run file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a partial run file"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tipbench run --resume " + path), std::string::npos) << e.what();
  }

  // A finished result reads as read_result reads it, with no warning added.
  const auto result_path = (dir / "x.json").string();
  write_bytes(result_path, tipbench::to_json_document(written.result).dump());
  EXPECT_EQ(tipbench::to_json_document(tipbench::read_result_or_partial(result_path)),
            tipbench::to_json_document(tipbench::read_result(result_path)));
  // Neither kind of file: the errors of read_result.
  try {
    tipbench::read_result_or_partial((dir / "missing.json").string());
    ADD_FAILURE() << "a missing file was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the result file"), std::string::npos) << e.what();
  }
  write_bytes(result_path, "{\"suites\": []}");
  try {
    tipbench::read_result_or_partial(result_path);
    ADD_FAILURE() << "a document with no schema_version was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a tipbench result"), std::string::npos) << e.what();
  }
}

// A child installs the notice, replaces it, and is stopped by `signal_number`: it prints the
// last notice and dies of that very signal.
void expect_notice_on(int signal_number) {
  const auto dir = fresh_scratch_dir("interrupt_notice_" + std::to_string(signal_number));
  const auto err = dir / "stderr.txt";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    tipbench::install_interrupt_notice("interrupted: nothing kept");
    tipbench::set_interrupt_notice("interrupted: 3 case(s) kept in x.partial");
    ::raise(signal_number);
    ::_exit(0);  // not reached: the notice re-raises with the default action
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), signal_number);
  EXPECT_EQ(read_bytes(err), "interrupted: 3 case(s) kept in x.partial\n");
}

TEST(InterruptNotice, SigintPrintsTheLastNoticeAndDiesOfSigint) { expect_notice_on(SIGINT); }

TEST(InterruptNotice, SigtermPrintsTheLastNoticeAndDiesOfSigterm) { expect_notice_on(SIGTERM); }

// A staged notice holds only once its file has been replaced: before, the current one is printed.
std::string notice_after_staging(const std::filesystem::path& dir, bool replace) {
  const auto err = dir / (replace ? "replaced.txt" : "kept.txt");
  const auto file = dir / (replace ? "replaced.partial" : "kept.partial");
  write_bytes(file, "old");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    tipbench::install_interrupt_notice("interrupted: 1 case(s) kept");
    tipbench::stage_interrupt_notice("interrupted: 2 case(s) kept", file.string());
    if (replace) {  // as write_partial_run does: a new file renamed over the old one
      write_bytes(dir / "new.tmp", "new");
      std::filesystem::rename(dir / "new.tmp", file);
    }
    ::raise(SIGINT);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return read_bytes(err);
}

TEST(InterruptNotice, AStagedNoticeHoldsOnceItsFileIsReplaced) {
  const auto dir = fresh_scratch_dir("interrupt_notice_staged");
  EXPECT_EQ(notice_after_staging(dir, /*replace=*/false), "interrupted: 1 case(s) kept\n");
  EXPECT_EQ(notice_after_staging(dir, /*replace=*/true), "interrupted: 2 case(s) kept\n");
}

}  // namespace
