// Where this process sits in a distributed run, read from the launcher's environment:
// `tipbench run --nproc N` (its own launcher), torchrun, a task of Slurm's srun, or variables set
// by hand. No LibTorch. Example:
//   if (auto env = tipbench::distributed::rank_env_from_environment()) use(env->rank, env->world_size);
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::distributed {

struct RankEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;  // ranks on this node (they share its cores / GPUs)
  int node_rank = 0;         // this node's index in the job: SLURM_NODEID, torchrun's GROUP_RANK
  int node_count = 1;        // nodes the job spans: SLURM_STEP_NUM_NODES, torchrun's GROUP_WORLD_SIZE
  // The ranks each node runs, by node index, when the launcher says (Slurm's tasks per node, or
  // an even layout); empty when it does not.
  std::vector<int> ranks_per_node;
  // Consecutive ranks share a node (Slurm's default block distribution, torchrun, by hand), so a
  // rank's node follows from ranks_per_node; false under srun --distribution=cyclic, plane or
  // arbitrary (SLURM_DISTRIBUTION), where only the rank itself knows its node.
  bool ranks_fill_nodes_in_order = true;
  std::string master_addr;  // the rendezvous store's host
  int master_port = 0;      // and port
  // The store is already hosted (torchrun's agent, tipbench's own launcher): every rank is a
  // client. Otherwise rank 0 hosts it on master_addr:master_port.
  bool store_hosted = false;
  std::string store_prefix;  // torchrun's agent store: "/worker/attempt_<restart count>"
  std::string launcher;      // "tipbench", "torchrun", "slurm" or "env"
};

// The variable lookup (std::getenv in production; a map in tests).
using EnvLookup = std::function<const char*(const char*)>;

// nullopt when this process is no rank of a distributed launch: no launcher variable, or a Slurm
// batch script or a one-task srun step (SLURM_PROCID alone is set in both). The launcher is, in
// order: torchrun (TORCHELASTIC_RUN_ID), tipbench's own (TIPBENCH_LAUNCHER), a task of an srun
// step of two or more tasks (SLURM_PROCID with SLURM_STEP_ID), else RANK and WORLD_SIZE set by
// hand. MASTER_ADDR and MASTER_PORT are required. Throws tipbench::InputError, one line naming
// the variable: one missing or malformed, a rank outside [0, world size), RANK or WORLD_SIZE
// disagreeing with Slurm's, or a MASTER_ADDR that is a loopback address while the job spans
// nodes (set by hand or under Slurm: torchrun computes its own).
std::optional<RankEnv> rank_env_from(const EnvLookup& get);
std::optional<RankEnv> rank_env_from_environment();

// The CUDA device index a rank uses: LOCAL_RANK when this node shows at least one GPU per local
// rank; 0 when it shows exactly one (the launcher gave each rank its own, e.g. srun
// --gpus-per-task=1 or CUDA_VISIBLE_DEVICES per rank: the rendezvous still refuses two ranks on
// one GPU). Throws InputError otherwise: NCCL needs one GPU per rank.
int gpu_index_for(const RankEnv& env, int visible_gpus);

// Slurm's tasks per node, "2(x3),1" -> {2, 2, 2, 1}. Throws InputError when malformed.
std::vector<int> parse_tasks_per_node(const std::string& text);

// True for "localhost", 127.0.0.0/8 and ::1, and for a host name that resolves only to them.
bool is_loopback_address(const std::string& host, bool resolve);

}  // namespace tipbench::distributed
