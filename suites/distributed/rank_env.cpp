#include "distributed/rank_env.h"

#include "tipbench/results/result.h"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <initializer_list>
#include <regex>

namespace tipbench::distributed {

namespace {

constexpr int kMaxRanks = 1 << 20;

std::string value_of(const EnvLookup& get, const char* name) {
  const char* v = get(name);
  return v == nullptr ? std::string() : std::string(v);
}

int parse_integer(const std::string& text, const char* name, int min, int max) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || value < min || value > max) {
    throw InputError(fmt::format("distributed launch: {}={} is not an integer in [{}, {}]", name, text, min, max));
  }
  return value;
}

int integer_of(const EnvLookup& get, const char* name, int min, int max) {
  const std::string text = value_of(get, name);
  if (text.empty()) throw InputError(fmt::format("distributed launch: {} is not set", name));
  return parse_integer(text, name, min, max);
}

// The first of `names` that is set.
const char* first_set(const EnvLookup& get, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (get(name) != nullptr) return name;
  }
  return nullptr;
}

// A task of an srun step: srun sets SLURM_STEP_ID for its tasks; a batch script has none.
bool in_slurm_step(const EnvLookup& get) {
  return get("SLURM_PROCID") != nullptr && first_set(get, {"SLURM_STEP_ID", "SLURM_STEPID"}) != nullptr;
}

// A variable set by hand beside Slurm's must say the same, or ranks would disagree on the layout.
void check_agrees(const EnvLookup& get, const char* name, int slurm_value, const char* slurm_name) {
  const std::string text = value_of(get, name);
  if (text.empty() || text == std::to_string(slurm_value)) return;
  throw InputError(fmt::format(
      "distributed launch: {}={} disagrees with Slurm's {}={} (this task's place in the srun step); unset {}: "
      "tipbench reads Slurm's variables",
      name, text, slurm_name, slurm_value, name));
}

void read_slurm(const EnvLookup& get, RankEnv& env) {
  // The step's own counts: SLURM_NTASKS and SLURM_NNODES may be the job's, inherited by the step.
  const char* tasks = first_set(get, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"});
  if (tasks == nullptr) throw InputError("distributed launch: SLURM_STEP_NUM_TASKS is not set");
  env.world_size = integer_of(get, tasks, 1, kMaxRanks);
  env.rank = integer_of(get, "SLURM_PROCID", 0, env.world_size - 1);
  env.local_rank = get("SLURM_LOCALID") ? integer_of(get, "SLURM_LOCALID", 0, env.world_size - 1) : 0;
  const char* nodes = first_set(get, {"SLURM_STEP_NUM_NODES", "SLURM_NNODES"});
  env.node_count = nodes ? integer_of(get, nodes, 1, env.world_size) : 1;
  env.node_rank = get("SLURM_NODEID") ? integer_of(get, "SLURM_NODEID", 0, env.node_count - 1) : 0;
  const char* per_node = first_set(get, {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE"});
  if (per_node != nullptr) {
    auto counts = parse_tasks_per_node(value_of(get, per_node));
    if (static_cast<int>(counts.size()) == env.node_count) {
      env.ranks_per_node = counts;
      env.local_world_size = counts[env.node_rank];
    } else {
      env.local_world_size = counts.front();  // SLURM_NTASKS_PER_NODE: one number for every node
    }
  }
  // "block", "cyclic", "plane", "arbitrary", then ":" and the distribution within a node; "*" or
  // none is the default, block.
  const std::string distribution = value_of(get, "SLURM_DISTRIBUTION");
  const std::string across_nodes = distribution.substr(0, distribution.find_first_of(":,"));
  env.ranks_fill_nodes_in_order = across_nodes.empty() || across_nodes == "block" || across_nodes == "*";
  check_agrees(get, "WORLD_SIZE", env.world_size, tasks);
  check_agrees(get, "RANK", env.rank, "SLURM_PROCID");
  check_agrees(get, "LOCAL_RANK", env.local_rank, "SLURM_LOCALID");
  env.launcher = "slurm";
}

void read_plain(const EnvLookup& get, RankEnv& env) {
  env.world_size = integer_of(get, "WORLD_SIZE", 1, kMaxRanks);
  env.rank = integer_of(get, "RANK", 0, env.world_size - 1);
  env.local_world_size =
      get("LOCAL_WORLD_SIZE") ? integer_of(get, "LOCAL_WORLD_SIZE", 1, env.world_size) : env.world_size;
  env.local_rank =
      get("LOCAL_RANK") ? integer_of(get, "LOCAL_RANK", 0, env.world_size - 1) : env.rank % env.local_world_size;
  if (get("GROUP_WORLD_SIZE") != nullptr) {  // torchrun's agents: one per node
    env.node_count = integer_of(get, "GROUP_WORLD_SIZE", 1, env.world_size);
    env.node_rank = integer_of(get, "GROUP_RANK", 0, env.node_count - 1);
  } else {  // by hand: nodes of LOCAL_WORLD_SIZE ranks each
    env.node_count = (env.world_size + env.local_world_size - 1) / env.local_world_size;
    env.node_rank = env.rank / env.local_world_size;
  }
  if (env.node_count * env.local_world_size == env.world_size) {
    env.ranks_per_node.assign(env.node_count, env.local_world_size);
  }
  env.launcher = get("TIPBENCH_LAUNCHER") ? "tipbench" : get("TORCHELASTIC_RUN_ID") ? "torchrun" : "env";
}

// Rank 0 hosts the store at MASTER_ADDR; a rank on another node that reads a loopback address
// there would look for it on its own machine. torchrun computes MASTER_ADDR itself (its agents
// already met at its rendezvous endpoint), so only an address set by hand is checked.
void check_master_addr(const RankEnv& env) {
  if (env.node_count <= 1 || env.launcher == "torchrun" || env.launcher == "tipbench") return;
  // On node 0 a name may resolve to loopback harmlessly (Debian maps the host name to 127.0.1.1);
  // on any other node it means this very machine.
  if (!is_loopback_address(env.master_addr, /*resolve=*/env.node_rank != 0)) return;
  throw InputError(fmt::format(
      "distributed launch: MASTER_ADDR={} is a loopback address on node {}, but the job spans {} nodes: the other "
      "nodes would look for rank 0's store on themselves; set MASTER_ADDR to the first node's address (under Slurm: "
      "scontrol show node \"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\" | grep -o 'NodeAddr=[^ "
      "]*')",
      env.master_addr, env.node_rank, env.node_count));
}

}  // namespace

std::vector<int> parse_tasks_per_node(const std::string& text) {
  static const std::regex item(R"(([0-9]+)(\(x([0-9]+)\))?)");
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::smatch m;
    if (!std::regex_match(part, m, item)) {
      throw InputError(fmt::format("distributed launch: Slurm's tasks per node '{}' is not like 2(x3),1", text));
    }
    const int count = parse_integer(m[1].str(), "tasks per node", 1, kMaxRanks);
    const int repeat = m[3].matched ? parse_integer(m[3].str(), "tasks per node", 1, kMaxRanks) : 1;
    counts.insert(counts.end(), repeat, count);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return counts;
}

bool is_loopback_address(const std::string& host, bool resolve) {
  if (host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1") return true;
  if (!resolve) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return false;
  bool all_loopback = true;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      all_loopback = all_loopback && (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      all_loopback = all_loopback && IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
    }
  }
  ::freeaddrinfo(found);
  return all_loopback;
}

int gpu_index_for(const RankEnv& env, int visible_gpus) {
  if (visible_gpus >= env.local_world_size && visible_gpus > env.local_rank) return env.local_rank;
  if (visible_gpus == 1) return 0;
  throw InputError(fmt::format(
      "rank {} is local rank {} of {} on its node, but {} CUDA device(s) are visible: NCCL needs one GPU per rank; "
      "launch at most {} rank(s) per node (--nproc, --nproc-per-node, --ntasks-per-node), or give each rank its own "
      "GPU (srun --gpus-per-task=1)",
      env.rank, env.local_rank, env.local_world_size, visible_gpus, visible_gpus));
}

std::optional<RankEnv> rank_env_from(const EnvLookup& get) {
  RankEnv env;
  const bool launched = get("TORCHELASTIC_RUN_ID") != nullptr || get("TIPBENCH_LAUNCHER") != nullptr;
  if (!launched && in_slurm_step(get)) {
    read_slurm(get, env);
    if (env.world_size == 1) return std::nullopt;  // `srun -n1 tipbench run ...`: one process
  } else if (launched || get("RANK") != nullptr || get("WORLD_SIZE") != nullptr) {
    read_plain(get, env);
  } else {
    return std::nullopt;
  }
  env.master_addr = value_of(get, "MASTER_ADDR");
  if (env.master_addr.empty()) {
    throw InputError(
        "distributed launch: MASTER_ADDR is not set (the host of rank 0; under Slurm e.g. "
        "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1))");
  }
  env.master_port = integer_of(get, "MASTER_PORT", 1, 65535);
  check_master_addr(env);
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
