#include "distributed/rank_places.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace tipbench::distributed {

nlohmann::json to_json(const RankPlace& place) {
  return {{"rank", place.rank}, {"node", place.node}, {"host", place.host}, {"gpu", place.gpu}, {"run", place.run}};
}

RankPlace rank_place_from_json(const nlohmann::json& j) {
  return {.rank = j.at("rank").get<int>(),
          .node = j.at("node").get<int>(),
          .host = j.at("host").get<std::string>(),
          .gpu = j.at("gpu").get<std::string>(),
          .run = j.at("run")};
}

std::optional<std::string> run_disagreement(const std::vector<RankPlace>& places) {
  if (places.empty()) return std::nullopt;
  const auto& lead = places.front().run;
  for (const auto& p : places) {
    if (p.run == lead) continue;
    std::vector<std::string> where;
    for (const auto& op : nlohmann::json::diff(lead, p.run)) {
      const std::string path = op.at("path").get<std::string>();
      const auto pointer = nlohmann::json::json_pointer(path);
      const std::string here = p.run.contains(pointer) ? p.run.at(pointer).dump() : "(unset)";
      const std::string there = lead.contains(pointer) ? lead.at(pointer).dump() : "(unset)";
      where.push_back(fmt::format("{} is {} on rank {} but {} on rank 0", path, here, p.rank, there));
    }
    return fmt::format(
        "the ranks disagree on the run: {}; every rank must run the same tipbench command (rank {} on {})",
        fmt::join(where, "; "), p.rank, p.host);
  }
  return std::nullopt;
}

std::optional<std::string> shared_gpu_problem(const std::vector<RankPlace>& places) {
  std::map<std::string, const RankPlace*> owner;
  for (const auto& p : places) {
    if (p.gpu.empty()) continue;
    const auto [it, fresh] = owner.emplace(p.gpu, &p);
    if (fresh) continue;
    return fmt::format(
        "ranks {} and {} both use GPU {} on {}: NCCL needs one GPU per rank; launch at most one rank per visible GPU",
        it->second->rank, p.rank, p.gpu, p.host);
  }
  return std::nullopt;
}

nlohmann::json layout_of(const std::vector<RankPlace>& places, int node_count) {
  std::vector<int> ranks(static_cast<std::size_t>(node_count), 0);
  std::vector<std::string> hosts(static_cast<std::size_t>(node_count));
  for (const auto& p : places) {
    if (p.node < 0 || p.node >= node_count) continue;
    ++ranks[p.node];
    if (hosts[p.node].empty()) hosts[p.node] = p.host;
  }
  return {{"nodes", node_count}, {"ranks_per_node", ranks}, {"hosts", hosts}};
}

int node_of_rank(const std::vector<int>& ranks_per_node, int rank) {
  int first = 0;
  for (int node = 0; node < static_cast<int>(ranks_per_node.size()); ++node) {
    first += ranks_per_node[node];
    if (rank < first) return node;
  }
  return -1;
}

std::string missing_ranks_text(const std::vector<int>& missing, const RankEnv& env) {
  std::string out = fmt::format("{} {}", missing.size() == 1 ? "rank" : "ranks", fmt::join(missing, ", "));
  if (env.node_count <= 1 || !env.ranks_fill_nodes_in_order) return out;
  std::vector<int> nodes;
  for (int r : missing) {
    const int node = node_of_rank(env.ranks_per_node, r);
    if (node < 0) return out;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  return out + fmt::format(" (node{} {} of {} by the launcher's layout)", nodes.size() == 1 ? "" : "s",
                           fmt::join(nodes, ", "), env.node_count);
}

}  // namespace tipbench::distributed
