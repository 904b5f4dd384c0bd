// Where this process sits in a distributed run, read from the launcher's environment:
// `tipbench run --nproc N` (its own launcher), torchrun, Slurm's srun, or variables set by hand.
// No LibTorch. Example:
//   if (auto env = tipbench::distributed::rank_env_from_environment()) use(env->rank, env->world_size);
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace tipbench::distributed {

struct RankEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;  // ranks on this node (they share its cores / GPUs)
  std::string master_addr;   // the rendezvous store's host
  int master_port = 0;       // and port
  // The store is already hosted (torchrun's agent, tipbench's own launcher): every rank is a
  // client. Otherwise rank 0 hosts it on master_addr:master_port.
  bool store_hosted = false;
  std::string store_prefix;  // torchrun's agent store: "/worker/attempt_<restart count>"
  std::string launcher;      // "tipbench", "torchrun", "slurm" or "env"
};

// The variable lookup (std::getenv in production; a map in tests).
using EnvLookup = std::function<const char*(const char*)>;

// nullopt when no launcher variable is set (a plain single-process run). Precedence: RANK and
// WORLD_SIZE (tipbench, torchrun, by hand), else SLURM_PROCID and SLURM_NTASKS. MASTER_ADDR and
// MASTER_PORT are required in both cases. Throws tipbench::InputError naming the variable when
// one is missing or malformed, or a rank is outside [0, world size).
std::optional<RankEnv> rank_env_from(const EnvLookup& get);
std::optional<RankEnv> rank_env_from_environment();

}  // namespace tipbench::distributed
