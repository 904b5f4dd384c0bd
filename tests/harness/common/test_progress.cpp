// Progress' plain-line mode (not a terminal): one line per event.
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

using tipbench::testing::sample_result;

// ---------------------------------------------------------------------------------------------
// Progress

// What a Progress wrote to its temporary file; the file is closed.
std::string read_back(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char buf[256];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  std::fclose(f);
  return text;
}

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
  return read_back(f);
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

// Inside a case, a non-terminal gets one line when the case ends, not one per trial (a CI log
// of a quick run: 40 lines, not 440); notes still stand on their own.
TEST(Progress, PlainModeWritesOneLinePerCase) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    tipbench::Progress p(false, f);
    p.begin(6);
    p.case_started("zero_grad/model:small_cnn/batch:32");
    for (int block = 0; block < 2; ++block) {
      for (const char* arm : {"arm:none", "arm:zero"}) {
        p.trial_started("zero_grad", arm, block, 2);
        p.trial_finished(1.0);
      }
    }
    p.note("skipped: zero_grad/arm:python_eager: needs torch in Python");
    p.case_finished();
    p.case_started("inplace/model:small_cnn/batch:32");  // nothing ran: no line
    p.case_finished();
    p.trial_started("amp", "arm:bf16", 0, 1);  // outside a case: a line per trial, as before
    p.trial_finished(1.0);
    p.end();
  }
  const std::string text = read_back(f);
  const auto lines = split_lines(text);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_EQ(lines[0], "skipped: zero_grad/arm:python_eager: needs torch in Python");
  EXPECT_EQ(lines[1], "[4/6] zero_grad/model:small_cnn/batch:32: 4 trials, 2 blocks in 4.0s  ETA 0:02");
  EXPECT_EQ(lines[2], "[5/6] amp arm:bf16 block 1/1 done in 1.0s  ETA 0:01");
}

// `run --verbose`: a line per trial inside a case too, then the case's line.
TEST(Progress, EveryTrialMakesItsLineWhenAsked) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    tipbench::Progress p(false, f, /*every_trial=*/true);
    p.begin(2);
    p.case_started("zero_grad/model:small_cnn/batch:32");
    p.trial_started("zero_grad", "arm:none", 0, 1);
    p.trial_finished(1.0);
    p.trial_started("zero_grad", "arm:zero", 0, 1);
    p.trial_finished(1.0);
    p.case_finished();
  }
  const std::string text = read_back(f);
  const auto lines = split_lines(text);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_EQ(lines[0], "[1/2] zero_grad arm:none block 1/1 done in 1.0s  ETA 0:01");
  EXPECT_EQ(lines[2], "[2/2] zero_grad/model:small_cnn/batch:32: 2 trials, 1 block in 2.0s");
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
