// Which rank a process is, from the launcher's variables: tipbench --nproc, torchrun (with and
// without its agent store), Slurm's srun (and a batch script, which is no rank), nodes and tasks
// per node, the errors for missing, malformed or contradictory values, and which GPU a rank takes.
#include "distributed/rank_env.h"
#include "distributed/rank_places.h"
#include "tipbench/results/result.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

using tipbench::distributed::rank_env_from;

auto lookup(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(RankEnv, NoLauncherVariablesIsAPlainRun) { EXPECT_FALSE(rank_env_from(lookup({{"HOME", "/root"}})).has_value()); }

TEST(RankEnv, TorchrunWithAgentStoreIsAClientUnderTheAttemptPrefix) {
  const auto env = rank_env_from(lookup({{"RANK", "3"},
                                         {"LOCAL_RANK", "1"},
                                         {"WORLD_SIZE", "4"},
                                         {"LOCAL_WORLD_SIZE", "2"},
                                         {"MASTER_ADDR", "node0"},
                                         {"MASTER_PORT", "29500"},
                                         {"TORCHELASTIC_RUN_ID", "x"},
                                         {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                         {"TORCHELASTIC_RESTART_COUNT", "2"}}));
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->local_rank, 1);
  EXPECT_EQ(env->world_size, 4);
  EXPECT_EQ(env->local_world_size, 2);
  EXPECT_EQ(env->master_addr, "node0");
  EXPECT_EQ(env->master_port, 29500);
  EXPECT_TRUE(env->store_hosted);
  EXPECT_EQ(env->store_prefix, "/worker/attempt_2");
  EXPECT_EQ(env->launcher, "torchrun");
}

TEST(RankEnv, WithoutAgentStoreRankZeroHostsIt) {
  const auto env = rank_env_from(
      lookup({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1234"}}));
  ASSERT_TRUE(env.has_value());
  EXPECT_FALSE(env->store_hosted);
  EXPECT_EQ(env->store_prefix, "");
  EXPECT_EQ(env->launcher, "env");
  EXPECT_EQ(env->local_rank, 0);
}

TEST(RankEnv, TipbenchLauncherHostsTheStore) {
  const auto env = rank_env_from(lookup({{"RANK", "1"},
                                         {"WORLD_SIZE", "2"},
                                         {"MASTER_ADDR", "127.0.0.1"},
                                         {"MASTER_PORT", "1234"},
                                         {"TIPBENCH_LAUNCHER", "1"}}));
  ASSERT_TRUE(env.has_value());
  EXPECT_TRUE(env->store_hosted);
  EXPECT_EQ(env->launcher, "tipbench");
}

TEST(RankEnv, SlurmVariablesWhenNoRankIsSet) {
  const auto env = rank_env_from(lookup({{"SLURM_PROCID", "5"},
                                         {"SLURM_STEP_ID", "0"},
                                         {"SLURM_LOCALID", "1"},
                                         {"SLURM_NTASKS", "8"},
                                         {"SLURM_NTASKS_PER_NODE", "4(x2)"},
                                         {"MASTER_ADDR", "n1"},
                                         {"MASTER_PORT", "29501"}}));
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->rank, 5);
  EXPECT_EQ(env->local_rank, 1);
  EXPECT_EQ(env->world_size, 8);
  EXPECT_EQ(env->local_world_size, 4);
  EXPECT_EQ(env->launcher, "slurm");
}

std::string message(const std::map<std::string, std::string>& vars) {
  try {
    rank_env_from(lookup(vars));
  } catch (const tipbench::InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(RankEnv, MissingOrMalformedValuesNameTheVariable) {
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}).find("MASTER_ADDR"), std::string::npos);
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).find("MASTER_PORT"), std::string::npos);
  EXPECT_NE(message({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}).find("RANK=2"),
            std::string::npos);
  EXPECT_NE(message({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}).find("RANK=x"),
            std::string::npos);
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})
                .find("MASTER_PORT=70000"),
            std::string::npos);
}

// An srun step of 2 tasks on 2 nodes, as the local cluster's tasks see it (tests/distributed/slurm).
std::map<std::string, std::string> slurm_task(int procid, int nodeid) {
  return {{"SLURM_PROCID", std::to_string(procid)},
          {"SLURM_LOCALID", "0"},
          {"SLURM_NODEID", std::to_string(nodeid)},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_NTASKS", "2"},
          {"SLURM_STEP_NUM_TASKS", "2"},
          {"SLURM_NNODES", "2"},
          {"SLURM_STEP_NUM_NODES", "2"},
          {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
          {"MASTER_ADDR", "10.0.0.1"},
          {"MASTER_PORT", "29500"}};
}

TEST(RankEnv, SlurmTaskKnowsItsNodeAndTheTasksPerNode) {
  const auto env = rank_env_from(lookup(slurm_task(1, 1)));
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->rank, 1);
  EXPECT_EQ(env->world_size, 2);
  EXPECT_EQ(env->node_rank, 1);
  EXPECT_EQ(env->node_count, 2);
  EXPECT_EQ(env->local_world_size, 1);
  EXPECT_EQ(env->ranks_per_node, (std::vector<int>{1, 1}));
  EXPECT_EQ(env->launcher, "slurm");
}

TEST(RankEnv, TheStepsCountsWinOverTheJobs) {
  auto vars = slurm_task(0, 0);
  vars["SLURM_NTASKS"] = "8";  // the job's, inherited by a smaller step
  vars["SLURM_NNODES"] = "4";
  const auto env = rank_env_from(lookup(vars));
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->world_size, 2);
  EXPECT_EQ(env->node_count, 2);
}

TEST(RankEnv, UnevenTasksPerNodeGiveThisNodesCount) {
  auto vars = slurm_task(4, 2);
  vars["SLURM_STEP_NUM_TASKS"] = "5";
  vars["SLURM_STEP_NUM_NODES"] = "3";
  vars["SLURM_STEP_TASKS_PER_NODE"] = "2(x2),1";
  const auto env = rank_env_from(lookup(vars));
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->local_world_size, 1);
  EXPECT_EQ(env->ranks_per_node, (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(tipbench::distributed::parse_tasks_per_node("4"), std::vector<int>{4});
  EXPECT_THROW(tipbench::distributed::parse_tasks_per_node("2(x)"), tipbench::InputError);
  EXPECT_THROW(tipbench::distributed::parse_tasks_per_node(""), tipbench::InputError);
}

// A batch script has SLURM_PROCID=0 (and SLURM_NTASKS with --ntasks) but no step: a plain run
// there, e.g. each task of the campaign's job array, is no rank of anything.
TEST(RankEnv, ABatchScriptOrAOneTaskStepIsNoRank) {
  EXPECT_FALSE(rank_env_from(lookup({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_NNODES", "2"}})));
  auto one = slurm_task(0, 0);
  one["SLURM_STEP_NUM_TASKS"] = "1";
  one["SLURM_STEP_NUM_NODES"] = "1";
  one["SLURM_STEP_TASKS_PER_NODE"] = "1";
  EXPECT_FALSE(rank_env_from(lookup(one)));
}

TEST(RankEnv, RankOrWorldSizeThatDisagreeWithSlurmAreRefused) {
  auto vars = slurm_task(1, 1);
  vars["WORLD_SIZE"] = "4";
  EXPECT_NE(message(vars).find("WORLD_SIZE=4 disagrees with Slurm's SLURM_STEP_NUM_TASKS=2"), std::string::npos)
      << message(vars);
  vars["WORLD_SIZE"] = "2";
  EXPECT_NO_THROW(rank_env_from(lookup(vars)));  // saying the same is fine
  vars["RANK"] = "0";
  EXPECT_NE(message(vars).find("RANK=0 disagrees with Slurm's SLURM_PROCID=1"), std::string::npos) << message(vars);
}

TEST(RankEnv, ALoopbackMasterAddrIsRefusedWhenTheJobSpansNodes) {
  for (const char* addr : {"localhost", "127.0.0.1", "::1"}) {
    auto vars = slurm_task(0, 0);
    vars["MASTER_ADDR"] = addr;
    EXPECT_NE(message(vars).find("is a loopback address on node 0, but the job spans 2 nodes"), std::string::npos)
        << message(vars);
  }
  // By hand: 2 ranks of 1 per node.
  EXPECT_NE(message({{"RANK", "1"},
                     {"WORLD_SIZE", "2"},
                     {"LOCAL_WORLD_SIZE", "1"},
                     {"MASTER_ADDR", "localhost"},
                     {"MASTER_PORT", "1"}})
                .find("spans 2 nodes"),
            std::string::npos);
  // On another node, a name that resolves to loopback is this very machine (2130706433 is
  // 127.0.0.1 as one number, which the resolver reads without DNS).
  auto far = slurm_task(1, 1);
  far["MASTER_ADDR"] = "2130706433";
  EXPECT_NE(message(far).find("loopback"), std::string::npos) << message(far);
  // One node: loopback is right. torchrun: it computes MASTER_ADDR itself (its agents met already).
  EXPECT_NO_THROW(
      rank_env_from(lookup({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "localhost"}, {"MASTER_PORT", "1"}})));
  const auto torchrun = rank_env_from(lookup({{"RANK", "1"},
                                              {"WORLD_SIZE", "2"},
                                              {"LOCAL_WORLD_SIZE", "1"},
                                              {"GROUP_RANK", "1"},
                                              {"GROUP_WORLD_SIZE", "2"},
                                              {"TORCHELASTIC_RUN_ID", "x"},
                                              {"MASTER_ADDR", "localhost"},
                                              {"MASTER_PORT", "1"}}));
  ASSERT_TRUE(torchrun.has_value());
  EXPECT_EQ(torchrun->node_rank, 1);
  EXPECT_EQ(torchrun->node_count, 2);
}

TEST(RankEnv, EachRankGetsItsOwnGpuOrTheLayoutIsRefused) {
  using tipbench::distributed::gpu_index_for;
  tipbench::distributed::RankEnv env;
  env.local_rank = 1;
  env.local_world_size = 2;
  EXPECT_EQ(gpu_index_for(env, 8), 1);  // every GPU visible: cuda:LOCAL_RANK
  EXPECT_EQ(gpu_index_for(env, 1), 0);  // one GPU given to this rank (--gpus-per-task=1)
  env.local_rank = 2;
  env.local_world_size = 3;
  try {
    gpu_index_for(env, 2);
    FAIL() << "3 ranks on 2 GPUs";
  } catch (const tipbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL needs one GPU per rank"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpu_index_for(env, 0), tipbench::InputError);
}

using tipbench::distributed::RankPlace;

std::vector<RankPlace> two_places() {
  const nlohmann::json run = {{"suites", {"data_parallel"}}, {"options", {{"bucket-mb", "0.25"}}}};
  return {{.rank = 0, .node = 0, .host = "node1", .gpu = "GPU-a", .run = run},
          {.rank = 1, .node = 1, .host = "node2", .gpu = "GPU-b", .run = run}};
}

TEST(RankPlaces, AgreeingRanksGiveTheLayout) {
  const auto places = two_places();
  EXPECT_FALSE(tipbench::distributed::run_disagreement(places));
  EXPECT_FALSE(tipbench::distributed::shared_gpu_problem(places));
  const auto layout = tipbench::distributed::layout_of(places, 2);
  EXPECT_EQ(layout.at("nodes"), 2);
  EXPECT_EQ(layout.at("ranks_per_node"), nlohmann::json({1, 1}));
  EXPECT_EQ(layout.at("hosts"), nlohmann::json({"node1", "node2"}));
  EXPECT_EQ(tipbench::distributed::rank_place_from_json(to_json(places[1])).host, "node2");
}

TEST(RankPlaces, ADisagreementOrASharedGpuIsNamed) {
  auto places = two_places();
  places[1].run["options"]["bucket-mb"] = "0.5";
  const auto problem = tipbench::distributed::run_disagreement(places);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("/options/bucket-mb is \"0.5\" on rank 1 but \"0.25\" on rank 0"), std::string::npos)
      << *problem;
  places = two_places();
  places[1].gpu = "GPU-a";
  const auto shared = tipbench::distributed::shared_gpu_problem(places);
  ASSERT_TRUE(shared);
  EXPECT_NE(shared->find("ranks 0 and 1 both use GPU GPU-a"), std::string::npos) << *shared;
}

TEST(RankPlaces, AMissingRanksNodeFollowsTheBlockLayout) {
  using tipbench::distributed::node_of_rank;
  EXPECT_EQ(node_of_rank({2, 2, 1}, 0), 0);
  EXPECT_EQ(node_of_rank({2, 2, 1}, 3), 1);
  EXPECT_EQ(node_of_rank({2, 2, 1}, 4), 2);
  EXPECT_EQ(node_of_rank({2, 2, 1}, 5), -1);
  EXPECT_EQ(node_of_rank({}, 0), -1);
}

// A rank that never came is placed on its node only where consecutive ranks fill the nodes:
// srun --distribution=cyclic puts rank 1 on node 1 of 2, where the block layout says node 0.
TEST(RankPlaces, AMissingRanksNodeIsNamedOnlyUnderTheBlockDistribution) {
  using tipbench::distributed::missing_ranks_text;
  auto vars = slurm_task(0, 0);
  vars["SLURM_STEP_NUM_TASKS"] = "4";
  vars["SLURM_STEP_TASKS_PER_NODE"] = "2(x2)";
  for (const char* block : {"", "block", "block:cyclic", "*"}) {
    if (*block != '\0') vars["SLURM_DISTRIBUTION"] = block;
    const auto env = rank_env_from(lookup(vars));
    ASSERT_TRUE(env.has_value()) << block;
    EXPECT_TRUE(env->ranks_fill_nodes_in_order) << block;
    EXPECT_EQ(missing_ranks_text({1}, *env), "rank 1 (node 0 of 2 by the launcher's layout)") << block;
    EXPECT_EQ(missing_ranks_text({1, 3}, *env), "ranks 1, 3 (nodes 0, 1 of 2 by the launcher's layout)") << block;
  }
  for (const char* other : {"cyclic", "cyclic:block", "plane", "arbitrary"}) {
    vars["SLURM_DISTRIBUTION"] = other;
    const auto env = rank_env_from(lookup(vars));
    ASSERT_TRUE(env.has_value()) << other;
    EXPECT_FALSE(env->ranks_fill_nodes_in_order) << other;
    EXPECT_EQ(missing_ranks_text({1}, *env), "rank 1") << other;
  }
  // One node: nothing to say about nodes.
  tipbench::distributed::RankEnv one;
  one.world_size = 2;
  one.ranks_per_node = {2};
  EXPECT_EQ(missing_ranks_text({1}, one), "rank 1");
}

}  // namespace
