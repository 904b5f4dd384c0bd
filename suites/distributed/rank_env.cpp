#include "distributed/rank_env.h"

#include "tipbench/result.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace tipbench::distributed {

namespace {

std::string value_of(const EnvLookup& get, const char* name) {
  const char* v = get(name);
  return v == nullptr ? std::string() : std::string(v);
}

int integer_of(const EnvLookup& get, const char* name, int min, int max) {
  const std::string text = value_of(get, name);
  if (text.empty()) throw InputError(fmt::format("distributed launch: {} is not set", name));
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < min || value > max) {
    throw InputError(fmt::format("distributed launch: {}={} is not an integer in [{}, {}]", name, text, min, max));
  }
  return value;
}

}  // namespace

std::optional<RankEnv> rank_env_from(const EnvLookup& get) {
  RankEnv env;
  const bool plain = get("RANK") != nullptr || get("WORLD_SIZE") != nullptr;
  const bool slurm = !plain && get("SLURM_PROCID") != nullptr && get("SLURM_NTASKS") != nullptr;
  if (!plain && !slurm) return std::nullopt;
  constexpr int kMaxRanks = 1 << 20;
  if (plain) {
    env.world_size = integer_of(get, "WORLD_SIZE", 1, kMaxRanks);
    env.rank = integer_of(get, "RANK", 0, env.world_size - 1);
    env.local_rank = get("LOCAL_RANK") ? integer_of(get, "LOCAL_RANK", 0, env.world_size - 1) : env.rank;
    env.local_world_size =
        get("LOCAL_WORLD_SIZE") ? integer_of(get, "LOCAL_WORLD_SIZE", 1, env.world_size) : env.world_size;
    env.launcher = get("TIPBENCH_LAUNCHER") ? "tipbench" : get("TORCHELASTIC_RUN_ID") ? "torchrun" : "env";
  } else {
    env.world_size = integer_of(get, "SLURM_NTASKS", 1, kMaxRanks);
    env.rank = integer_of(get, "SLURM_PROCID", 0, env.world_size - 1);
    env.local_rank = get("SLURM_LOCALID") ? integer_of(get, "SLURM_LOCALID", 0, env.world_size - 1) : 0;
    // SLURM_NTASKS_PER_NODE may read "4(x2)" on uneven layouts; its leading number is what we need.
    const std::string per_node = value_of(get, "SLURM_NTASKS_PER_NODE");
    env.local_world_size = per_node.empty() ? 1 : std::max(1, std::atoi(per_node.c_str()));
    env.launcher = "slurm";
  }
  env.master_addr = value_of(get, "MASTER_ADDR");
  if (env.master_addr.empty()) {
    throw InputError(
        "distributed launch: MASTER_ADDR is not set (the host of rank 0; under Slurm e.g. "
        "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1))");
  }
  env.master_port = integer_of(get, "MASTER_PORT", 1, 65535);
  // torchrun's agent already hosts the store; its ranks live under a per-attempt prefix.
  if (value_of(get, "TORCHELASTIC_USE_AGENT_STORE") == "True") {
    env.store_hosted = true;
    const std::string restart = value_of(get, "TORCHELASTIC_RESTART_COUNT");
    env.store_prefix = "/worker/attempt_" + (restart.empty() ? std::string("0") : restart);
  }
  if (env.launcher == "tipbench") env.store_hosted = true;  // `--nproc`: the launcher hosts it
  return env;
}

std::optional<RankEnv> rank_env_from_environment() {
  return rank_env_from([](const char* name) { return std::getenv(name); });
}

}  // namespace tipbench::distributed
