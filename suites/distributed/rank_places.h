// What every rank says about itself at the rendezvous (its host, node, GPU and the run it was
// asked to do), and what rank 0 concludes from all of them for every rank: whether they agree on
// the run, whether two share a GPU, and the layout the result records. No LibTorch. Example:
//   if (auto problem = run_disagreement(places)) throw InputError(*problem);
//   result_info["ranks_per_node"] = layout_of(places, env.node_count).at("ranks_per_node");
#pragma once

#include "distributed/rank_env.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tipbench::distributed {

struct RankPlace {
  int rank = 0;
  int node = 0;        // the launcher's node index
  std::string host;    // gethostname()
  std::string gpu;     // the CUDA device's UUID; "" on a CPU
  nlohmann::json run;  // the suite, options and settings this rank was started with
};

nlohmann::json to_json(const RankPlace& place);
RankPlace rank_place_from_json(const nlohmann::json& j);

// One line naming the first rank whose run differs from rank 0's and where ("/options/bucket-mb:
// 0.5 here, 0.25 on rank 0"), or nullopt when all agree.
std::optional<std::string> run_disagreement(const std::vector<RankPlace>& places);

// Two ranks on one GPU (NCCL needs one per rank), named, or nullopt.
std::optional<std::string> shared_gpu_problem(const std::vector<RankPlace>& places);

// {"nodes": N, "ranks_per_node": [..by node index..], "hosts": [..by node index..]}.
nlohmann::json layout_of(const std::vector<RankPlace>& places, int node_count);

// The node a rank is on under the launcher's block layout (consecutive ranks fill a node), or
// -1 when the layout is unknown: for naming a rank that never came.
int node_of_rank(const std::vector<int>& ranks_per_node, int rank);

// "ranks 3, 4 (nodes 1, 2 of 3 by the launcher's layout)": the ranks that never came, and their
// nodes where the layout places ranks in order (env.ranks_fill_nodes_in_order) across nodes.
std::string missing_ranks_text(const std::vector<int>& missing, const RankEnv& env);

}  // namespace tipbench::distributed
