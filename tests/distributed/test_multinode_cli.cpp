// Multi-node launches of the data_parallel suite on this one machine (issue 33): two torchrun
// agents meeting at a c10d rendezvous form a job of 2 nodes, and the refusals of item 1, each
// one line and exit 2 before any measuring: ranks that disagree on the run, a loopback
// MASTER_ADDR across nodes, a WORLD_SIZE that contradicts Slurm's, and a node that never joins,
// named. The Slurm cluster itself is tests/distributed/slurm/test_slurm_cluster.sh.
#include "tipbench/common/exit_codes.h"

#include "launch_support.h"
#include "running_child.h"
#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#ifndef TIPBENCH_TORCHRUN
#error "TIPBENCH_TORCHRUN must name torchrun (tests/distributed/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::RunningChild;
using tipbench::testing::launch::contains;
using tipbench::testing::launch::quick_run;
using tipbench::testing::launch::run;
using tipbench::testing::launch::unused_port;

bool one_line(const std::string& err) { return std::count(err.begin(), err.end(), '\n') == 1; }

// torchrun --nnodes 2: each agent is a node (GROUP_RANK); they meet at the c10d rendezvous
// endpoint, rank 0's agent hosts the store, and only global rank 0 writes the result.
TEST(MultiNodeLaunch, TwoTorchrunAgentsFormATwoNodeJob) {
  if (::access(TIPBENCH_TORCHRUN, X_OK) != 0) GTEST_SKIP() << "no torchrun at " << TIPBENCH_TORCHRUN;
  const auto dir = fresh_scratch_dir("dp_two_agents");
  const std::string endpoint = "127.0.0.1:" + unused_port();
  std::vector<std::unique_ptr<RunningChild>> agents;
  for (int node = 0; node < 2; ++node) {
    const auto logs = dir / ("node" + std::to_string(node));
    fs::create_directories(logs);
    auto args = quick_run(dir / "r.json");
    args.insert(args.begin(), {TIPBENCH_TORCHRUN, "--nnodes", "2", "--node-rank", std::to_string(node),
                               "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint,
                               "--rdzv-id", "tipbench-two-agents", "--no-python"});
    agents.push_back(
        std::make_unique<RunningChild>(args, logs, std::map<std::string, std::string>{{"OMP_NUM_THREADS", "1"}}));
    ASSERT_TRUE(agents.back()->started());
  }
  for (auto& agent : agents) {
    ASSERT_TRUE(agent->wait(std::chrono::seconds(600))) << agent->describe();
    EXPECT_TRUE(agent->exited() && agent->exit_code() == 0) << agent->describe() << ": " << agent->stderr_text();
  }
  tipbench::testing::launch::expect_two_rank_result(dir / "r.json", "torchrun", /*nodes=*/2);
  tipbench::testing::remove_tree(dir);
}

// Rank 0 and rank 1 started with different --bucket-mb: both say where they differ, exit 2.
TEST(MultiNodeRefusals, RanksThatDisagreeOnTheRunSayWhere) {
  const auto dir = fresh_scratch_dir("dp_disagree");
  fs::create_directories(dir / "rank0");
  const std::string port = unused_port();
  auto env = [&](int rank) {
    return std::map<std::string, std::string>{
        {"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}};
  };
  RunningChild rank0(quick_run(dir / "r.json"), dir / "rank0", env(0));
  auto args = quick_run(dir / "r.json");
  args[std::find(args.begin(), args.end(), "0.25") - args.begin()] = "0.5";
  const auto rank1 = run(args, dir, env(1));
  ASSERT_TRUE(rank0.wait(std::chrono::seconds(120))) << rank0.describe();
  for (const auto& [code, err] :
       {std::pair{rank0.exit_code(), rank0.stderr_text()}, std::pair{rank1.code, rank1.err}}) {
    EXPECT_EQ(code, tipbench::exit_code::usage) << err;
    EXPECT_TRUE(contains(err,
                         "the ranks disagree on the run: /options/bucket-mb is \"0.5\" on rank 1 but \"0.25\" on "
                         "rank 0"))
        << err;
    EXPECT_TRUE(one_line(err)) << err;
  }
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  tipbench::testing::remove_tree(dir);
}

// MASTER_ADDR=localhost in a job of 2 nodes (by hand, and as an srun task sees it): refused at
// once, before any rank waits for a store that is not there.
TEST(MultiNodeRefusals, ALoopbackMasterAddrAcrossNodesIsRefused) {
  const auto dir = fresh_scratch_dir("dp_loopback");
  auto o = run(quick_run(dir / "r.json"), dir,
               {{"RANK", "1"},
                {"WORLD_SIZE", "2"},
                {"LOCAL_WORLD_SIZE", "1"},
                {"MASTER_ADDR", "localhost"},
                {"MASTER_PORT", unused_port()}});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "MASTER_ADDR=localhost is a loopback address on node 1, but the job spans 2 nodes"))
      << o.err;
  EXPECT_TRUE(one_line(o.err)) << o.err;
  EXPECT_LT(o.seconds, 30);
  const std::map<std::string, std::string> srun_task{
      {"SLURM_PROCID", "0"},         {"SLURM_NODEID", "0"},         {"SLURM_STEP_ID", "0"},
      {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_STEP_NUM_NODES", "2"}, {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
      {"MASTER_ADDR", "127.0.0.1"},  {"MASTER_PORT", unused_port()}};
  o = run(quick_run(dir / "r.json"), dir, srun_task);
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "MASTER_ADDR=127.0.0.1 is a loopback address on node 0")) << o.err;
  auto contradicted = srun_task;
  contradicted["MASTER_ADDR"] = "10.0.0.1";
  contradicted["WORLD_SIZE"] = "4";
  o = run(quick_run(dir / "r.json"), dir, contradicted);
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "WORLD_SIZE=4 disagrees with Slurm's SLURM_STEP_NUM_TASKS=2")) << o.err;
  EXPECT_TRUE(one_line(o.err)) << o.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  tipbench::testing::remove_tree(dir);
}

// Rank 0 of a 2-node job, and node 1 never starts: one bounded wait, then the missing rank and
// its node are named.
TEST(MultiNodeRefusals, ANodeThatNeverJoinsIsNamed) {
  const std::string address = tipbench::testing::launch::non_loopback_address();
  if (address.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  const auto dir = fresh_scratch_dir("dp_missing_node");
  auto args = quick_run(dir / "r.json");
  args.insert(args.end(), {"--rendezvous-timeout", "2"});
  const auto o = run(args, dir,
                     {{"RANK", "0"},
                      {"WORLD_SIZE", "2"},
                      {"LOCAL_WORLD_SIZE", "1"},
                      {"MASTER_ADDR", address},
                      {"MASTER_PORT", unused_port()}});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "for rank 1 (node 1 of 2 by the launcher's layout) of 2 to join the rendezvous"))
      << o.err;
  EXPECT_TRUE(one_line(o.err)) << o.err;
  EXPECT_LT(o.seconds, 30);
  tipbench::testing::remove_tree(dir);
}

}  // namespace
