// Suites with process-wide knobs, end to end with the real binary: the allocator suite's trials
// run under the allocator their arm preloads (read back from the trial process's own memory map),
// and the glibc arm clears a preload the parent process was started with; debug_apis's profiler
// arm and --profile share a run. And the device bundle's fresh-arms check (`tipbench
// __fresh-arms`), rehearsed on the CPU: one line per suite, ok / skipped with the reason.
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "scratch_dir.h"
#include "test_paths.h"
#include "text_match.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <filesystem>
#include <map>
#include <string>

#ifndef TIPBENCH_BINARY
#error "TIPBENCH_BINARY must name the tipbench executable (tests/cli/CMakeLists.txt)"
#endif

namespace {

using tipbench::ArmStatus;
using tipbench::testing::contains;

const std::string kJemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";

TEST(FreshProcessSuites, AllocatorTrialsRunUnderTheLibraryTheirArmPreloads) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CPU run keeps this test short";
  const auto dir = tipbench::testing::fresh_scratch_dir("fresh_process_allocator");
  const std::string out = (dir / "r.json").string();
  // The parent itself runs under jemalloc when it is installed: the glibc arm must not inherit it.
  std::map<std::string, std::string> env;
  if (std::filesystem::exists(kJemalloc)) env["LD_PRELOAD"] = kJemalloc;
  const auto o = tipbench::testing::run_child(
      {TIPBENCH_BINARY, "run", "--quick", "--suite", "allocator", "--device", "cpu", "--blocks", "2", "--out", out},
      dir / "out.txt", dir / "err.txt", env);
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  ASSERT_EQ(r.suites.size(), 1u);
  EXPECT_EQ(r.suites[0].isolation, "fresh_process");
  const auto& c = r.suites[0].cases.at(0);
  ASSERT_EQ(c.arms.size(), 2u);  // --quick: glibc and jemalloc
  for (const auto& arm : c.arms) {
    SCOPED_TRACE(arm.name);
    if (arm.status == ArmStatus::skipped) {
      EXPECT_NE(arm.arm, "glibc");
      EXPECT_TRUE(contains(arm.reason, "is not installed")) << arm.reason;
      continue;
    }
    ASSERT_EQ(arm.status, ArmStatus::ok) << arm.reason;
    EXPECT_EQ(arm.trials.size(), 2u);
    const std::string library = arm.info.at("allocator_library").get<std::string>();
    const std::string version = arm.info.at("allocator_version").get<std::string>();
    if (arm.arm == "glibc") {
      EXPECT_TRUE(contains(library, "libc.so")) << library;
    } else {
      EXPECT_TRUE(contains(library, "lib" + arm.arm)) << library;
    }
    EXPECT_FALSE(version.empty()) << "as the allocator reports it (mallctl, tc_version, gnu_get_libc_version)";
  }
}

// The preallocate suite's arms, each trial in its own process: the pre-allocation is timed in the
// trial that paid it, every trial times whole cycles of sizes, and the note compares the first
// steps and the steady state of the two arms.
TEST(FreshProcessSuites, PreallocateTrialsEachStartAColdProcess) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CPU run keeps this test short";
  const auto dir = tipbench::testing::fresh_scratch_dir("fresh_process_preallocate");
  const std::string out = (dir / "r.json").string();
  const auto o = tipbench::testing::run_child(
      {TIPBENCH_BINARY, "run", "--quick", "--suite", "preallocate", "--device", "cpu", "--blocks", "3", "--out", out},
      dir / "out.txt", dir / "err.txt");
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  ASSERT_EQ(r.suites.size(), 1u);
  EXPECT_EQ(r.suites[0].isolation, "fresh_process");
  const auto& c = r.suites[0].cases.at(0);
  ASSERT_EQ(c.arms.size(), 2u);
  for (const auto& arm : c.arms) {
    SCOPED_TRACE(arm.arm);
    ASSERT_EQ(arm.status, ArmStatus::ok) << arm.reason;
    ASSERT_EQ(arm.trials.size(), 3u);
    for (const auto& t : arm.trials) {
      EXPECT_GE(t.step_times_ms.size(), 16u);
      EXPECT_EQ(t.step_times_ms.size() % 8, 0u);
      EXPECT_EQ(t.metrics.contains("preallocate_ms"), arm.arm == "max_shape");
    }
  }
  ASSERT_EQ(r.suites[0].notes.size(), 1u);
  EXPECT_TRUE(contains(r.suites[0].notes[0], "first steps (the pre-allocation and the first 8 steps, median): none "))
      << r.suites[0].notes[0];
}

// A library merely named libjemalloc.so.2 (here zlib under that name, found first on
// LD_LIBRARY_PATH) is preloaded but serves no malloc: the trial asks the library that does which
// allocator it is, and the jemalloc arm is skipped with the reason instead of measuring glibc.
TEST(FreshProcessSuites, ALibraryNamedLikeAnAllocatorThatIsNotOneIsSkipped) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CPU run keeps this test short";
  const auto dir = tipbench::testing::fresh_scratch_dir("fresh_process_fake_allocator");
  std::filesystem::create_directories(dir / "fake");
  std::filesystem::copy_file("/usr/lib/x86_64-linux-gnu/libz.so.1", dir / "fake" / "libjemalloc.so.2");
  const std::string out = (dir / "r.json").string();
  const auto o = tipbench::testing::run_child(
      {TIPBENCH_BINARY, "run", "--quick", "--suite", "allocator", "--device", "cpu", "--blocks", "1", "--out", out},
      dir / "out.txt", dir / "err.txt", {{"LD_LIBRARY_PATH", (dir / "fake").string()}});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  for (const auto& arm : r.suites.at(0).cases.at(0).arms) {
    SCOPED_TRACE(arm.name);
    if (arm.arm == "glibc") {
      EXPECT_EQ(arm.status, ArmStatus::ok) << arm.reason;
      continue;
    }
    EXPECT_EQ(arm.status, ArmStatus::skipped);
    EXPECT_TRUE(contains(arm.reason, "malloc is served by")) << arm.reason;
    EXPECT_TRUE(contains(arm.reason, "libc.so")) << arm.reason;
  }
  tipbench::testing::remove_tree(dir);
}

// --profile beside an arm that runs the profiler itself: that arm's extra profiled steps are
// refused with the reason (a second session would end the arm's), the others are profiled, and
// the run ends normally (once, the arm's own profiler was switched off twice and terminated it).
TEST(FreshProcessSuites, ProfileBesideAnArmThatProfilesItself) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CPU run keeps this test short";
  const auto dir = tipbench::testing::fresh_scratch_dir("profile_debug_apis");
  const std::string out = (dir / "r.json").string();
  const auto o =
      tipbench::testing::run_child({TIPBENCH_BINARY, "run", "--quick", "--suite", "debug_apis", "--device", "cpu",
                                    "--blocks", "1", "--profile", (dir / "traces").string(), "--out", out},
                                   dir / "out.txt", dir / "err.txt");
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  for (const auto& arm : r.suites.at(0).cases.at(0).arms) {
    SCOPED_TRACE(arm.name);
    ASSERT_EQ(arm.status, ArmStatus::ok) << arm.reason;
    ASSERT_TRUE(arm.profile.has_value());
    if (arm.arm == "profiler") {
      EXPECT_TRUE(contains(arm.profile->error, "already recording")) << arm.profile->error;
    } else {
      EXPECT_EQ(arm.profile->error, "");
      EXPECT_TRUE(std::filesystem::exists(arm.profile->trace_file)) << arm.profile->trace_file;
    }
  }
}

// run.sh check's `fresh-arms` step on the CPU: each suite's first runnable arm in its own trial
// process, one line per suite, the totals last; a suite that cannot run here says why.
TEST(FreshProcessSuites, TheBundlesFreshArmCheckRunsEachSuitesFirstArmInAChild) {
  const auto dir = tipbench::testing::fresh_scratch_dir("fresh_arms");
  const auto o = tipbench::testing::run_child({TIPBENCH_BINARY, "__fresh-arms", "cpu", "zero_grad", "tf32", "inplace"},
                                              dir / "out.txt", dir / "err.txt");
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.out << o.err;
  EXPECT_TRUE(contains(o.out, "ok       zero_grad/model:small_cnn/")) << o.out;
  EXPECT_TRUE(contains(o.out, "ok       inplace/model:small_cnn/")) << o.out;
  EXPECT_TRUE(contains(o.out, "skipped  tf32: ")) << o.out;
  EXPECT_TRUE(contains(o.out, "fresh arms on cpu: 2 ok, 1 skipped, 0 failed")) << o.out;
  const auto bad = tipbench::testing::run_child({TIPBENCH_BINARY, "__fresh-arms", "cpu", "no_such_suite"},
                                                dir / "out2.txt", dir / "err2.txt");
  EXPECT_EQ(bad.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(bad.err, "unknown suite 'no_such_suite'")) << bad.err;
  tipbench::testing::remove_tree(dir);
}

}  // namespace
