// Atomic result writes: a reader sees the old file or the new one, never a part; an interrupted
// or failed write leaves the file that existed before.
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

#include <atomic>
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
#include <thread>
#include <vector>
#include "sample_result.h"

namespace {

namespace fs = std::filesystem;
using tipbench::Result;
using tipbench::testing::expect_throw_containing;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::sample_result;
using tipbench::testing::write_bytes;

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

  rlimit saved{};
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

}  // namespace

namespace {

// Replace::no refuses a file already there in the rename itself: of writers racing to one new
// name (two `baseline save`s), exactly one wins, the file holds its bytes whole, and no temporary
// file is left behind.
TEST(AtomicWrite, WithoutReplaceExactlyOneOfRacingWritersWins) {
  const auto dir = fresh_scratch_dir("atomic_no_replace");
  const std::string path = (dir / "main.json").string();
  for (int round = 0; round < 20; ++round) {
    fs::remove(path);
    constexpr int kWriters = 8;
    std::atomic<int> wins{0}, refusals{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        try {
          tipbench::write_file_atomically(path, std::string(4096, static_cast<char>('a' + w)), tipbench::Replace::no);
          ++wins;
        } catch (const tipbench::FileExistsError&) {
          ++refusals;
        }
      });
    }
    for (auto& t : writers) t.join();
    ASSERT_EQ(wins.load(), 1) << "round " << round;
    ASSERT_EQ(refusals.load(), kWriters - 1);
    const std::string text = read_bytes(path);
    ASSERT_EQ(text.size(), 4096u);
    EXPECT_EQ(text.find_first_not_of(text[0]), std::string::npos) << "one writer's bytes, whole";
    EXPECT_EQ(list_dir(dir), std::vector<std::string>{"main.json"}) << "no temporary file left";
  }
  EXPECT_THROW(tipbench::write_file_atomically(path, "x", tipbench::Replace::no), tipbench::FileExistsError);
  EXPECT_NO_THROW(tipbench::write_file_atomically(path, "x", tipbench::Replace::yes));
  EXPECT_EQ(read_bytes(path), "x");
}

}  // namespace
