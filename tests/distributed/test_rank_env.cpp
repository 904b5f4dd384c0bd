// Which rank a process is, from the launcher's variables: tipbench --nproc, torchrun (with and
// without its agent store), Slurm, and the errors for missing or malformed values.
#include "distributed/rank_env.h"
#include "tipbench/result.h"

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

TEST(RankEnv, MissingOrMalformedValuesNameTheVariable) {
  auto message = [](const std::map<std::string, std::string>& vars) {
    try {
      rank_env_from(lookup(vars));
    } catch (const tipbench::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
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

}  // namespace
