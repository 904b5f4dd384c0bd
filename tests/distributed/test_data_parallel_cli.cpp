// The data_parallel suite as launched for real, the tipbench binary in child processes on the
// CPU (Gloo): `--nproc 2` and torchrun runs that gather rank 1's measurements into rank 0's
// result; a rank killed or stopped mid-run ends the run within 60 s naming the rank, with the
// previous result file left as it was; a rendezvous port in use is a clear error (exit 2).
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "launch_support.h"
#include "running_child.h"
#include "scratch_dir.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#ifndef TIPBENCH_TORCHRUN
#error "TIPBENCH_TORCHRUN must name torchrun (tests/distributed/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::write_bytes;
using tipbench::testing::launch::contains;
using tipbench::testing::launch::quick_run;
using tipbench::testing::launch::run;
using tipbench::testing::launch::unused_port;

TEST(DataParallelLaunch, NprocTwoGathersRankOneIntoRankZerosResult) {
  const auto dir = fresh_scratch_dir("dp_nproc");
  const auto o = run(
      [&] {
        auto a = quick_run(dir / "r.json");
        a.insert(a.end(), {"--nproc", "2"});
        return a;
      }(),
      dir);
  ASSERT_EQ(o.code, 0) << o.err;
  tipbench::testing::launch::expect_two_rank_result(dir / "r.json", "tipbench");
  tipbench::testing::remove_tree(dir);
}

TEST(DataParallelLaunch, TorchrunLaunchesTheSameBinary) {
  if (::access(TIPBENCH_TORCHRUN, X_OK) != 0) GTEST_SKIP() << "no torchrun at " << TIPBENCH_TORCHRUN;
  const auto dir = fresh_scratch_dir("dp_torchrun");
  auto args = quick_run(dir / "r.json");
  // --standalone: torchrun's own store on a free port, so nothing can collide.
  args.insert(args.begin(), {TIPBENCH_TORCHRUN, "--standalone", "--no-python", "--nproc-per-node", "2"});
  const auto o = run(args, dir, {{"OMP_NUM_THREADS", "1"}});
  ASSERT_EQ(o.code, 0) << o.err;
  tipbench::testing::launch::expect_two_rank_result(dir / "r.json", "torchrun");
  tipbench::testing::remove_tree(dir);
}

// A rank that dies or hangs mid-run: the run ends non-zero within 60 s, naming rank 1, and the
// result file of an earlier run is untouched.
void expect_fault_named(const std::string& fault, const std::string& message) {
  // One directory per fault: ctest may run the fault tests at the same time.
  std::string name = "dp_fault_" + fault;
  std::replace(name.begin(), name.end(), ':', '_');
  const auto dir = fresh_scratch_dir(name);
  write_bytes(dir / "r.json", "old result");
  auto args = quick_run(dir / "r.json");
  args.insert(args.end(), {"--nproc", "2"});
  const auto mark = dir / "fault_at";
  const auto o = run(args, dir, {{"TIPBENCH_TEST_FAULT", fault}, {"TIPBENCH_TEST_FAULT_MARK", mark.string()}});
  const double ended = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NE(o.code, 0) << o.err;
  // The others must be gone within 60 s of the fault (the launch before it may be slow on a busy CI).
  ASSERT_TRUE(fs::exists(mark)) << "the fault never fired: " << o.err;
  EXPECT_LT(ended - std::stod(read_bytes(mark)), 60) << o.err;
  EXPECT_TRUE(contains(o.err, message)) << o.err;
  EXPECT_EQ(read_bytes(dir / "r.json"), "old result");
  tipbench::testing::remove_tree(dir);
}

TEST(DataParallelFaults, ADeadRankIsNamedAndNothingIsWritten) {
  expect_fault_named("1:kill:15", "rank 1 was killed by signal 9");
}

// Rank 0 too: the launcher names it at once and stops the others (it used to wait out the
// grace period and print only "rank 1 did not exit").
TEST(DataParallelFaults, ADeadRankZeroIsNamedToo) {
  expect_fault_named("0:kill:15", "tipbench launcher: rank 0 was killed by signal 9");
}

// The launcher itself dies: every rank loses the store it hosted and says so in one line each,
// without c10d's backtraces.
TEST(DataParallelFaults, ALostLauncherIsOneLinePerRank) {
  const auto dir = fresh_scratch_dir("dp_launcher_killed");
  auto args = quick_run(dir / "r.json");
  args.insert(args.end(), {"--nproc", "2", "--verbose"});  // --verbose: a progress line per trial
  tipbench::testing::RunningChild launcher(args, dir);
  ASSERT_TRUE(launcher.wait_for_stderr(" block 1/", std::chrono::seconds(180))) << launcher.describe();
  ASSERT_EQ(::kill(launcher.pid(), SIGKILL), 0);
  ASSERT_TRUE(launcher.wait(std::chrono::seconds(10)));
  // The ranks still write to the same stderr file until they exit.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         !(contains(launcher.stderr_text(), "error: rank 0: lost the rendezvous store") &&
           contains(launcher.stderr_text(), "error: rank 1: lost the rendezvous store"))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const std::string err = launcher.stderr_text();
  EXPECT_TRUE(contains(err, "error: rank 0: lost the rendezvous store hosted by the tipbench launcher")) << err;
  EXPECT_TRUE(contains(err, "error: rank 1: lost the rendezvous store hosted by the tipbench launcher")) << err;
  EXPECT_FALSE(contains(err, "frame #")) << err;
  EXPECT_FALSE(contains(err, "Exception raised from")) << err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  tipbench::testing::remove_tree(dir);
}

TEST(DataParallelFaults, AHungRankIsNamedAndNothingIsWritten) {
  expect_fault_named("1:stop:15", "rank 1 stopped responding");
}

TEST(DataParallelFaults, ARendezvousPortInUseIsAClearError) {
  // Hold a listening socket on a port the kernel picked, then ask rank 0 to host the store there.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));

  const auto dir = fresh_scratch_dir("dp_port");
  const auto o = run(quick_run(dir / "r.json"), dir,
                     {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}});
  ::close(fd);
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "port is in use")) << o.err;
  EXPECT_TRUE(contains(o.err, port)) << o.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  tipbench::testing::remove_tree(dir);
}

// A rank whose peers never come waits once (--rendezvous-timeout), then says in one line what it
// waited for: c10d's own log lines and backtraces stay quiet, nothing is written.
TEST(DataParallelFaults, ARankWhosePeersNeverComeWaitsOnceAndSaysSo) {
  const auto dir = fresh_scratch_dir("dp_rendezvous");
  const std::string port = unused_port();
  auto args = quick_run(dir / "r.json");
  args.insert(args.end(), {"--rendezvous-timeout", "2"});
  // Rank 1 alone: the store rank 0 would host never comes up.
  auto o = run(args, dir, {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_LT(o.seconds, 15) << o.err;
  EXPECT_TRUE(contains(o.err, "rank 1: waited 2 s (--rendezvous-timeout) for the rendezvous store")) << o.err;
  EXPECT_TRUE(contains(o.err, "which rank 0 hosts")) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_FALSE(contains(o.err, "[c10d]")) << o.err;
  EXPECT_FALSE(contains(o.err, "frame #")) << o.err;
  // Rank 0 alone: it hosts the store, and rank 1 never joins.
  o = run(args, dir,
          {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", unused_port()}});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_LT(o.seconds, 15) << o.err;
  EXPECT_TRUE(contains(o.err, "rank 0: waited 2 s (--rendezvous-timeout) for rank 1 of 2 to join")) << o.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  // Outside a distributed launch the flag has nothing to bound.
  o = run({TIPBENCH_BINARY, "run", "--suite", "data_parallel", "--rendezvous-timeout", "5"}, dir);
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "applies to a distributed launch")) << o.err;
  tipbench::testing::remove_tree(dir);
}

TEST(DataParallelLaunch, NprocWithAnotherSuiteIsAUsageError) {
  const auto dir = fresh_scratch_dir("dp_usage");
  const auto o =
      run({TIPBENCH_BINARY, "run", "--suite", "zero_grad", "--nproc", "2", "--out", (dir / "r.json").string()}, dir);
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "runs only --suite data_parallel")) << o.err;
  tipbench::testing::remove_tree(dir);
}

}  // namespace
