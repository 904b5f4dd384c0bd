#include "tipbench/gate/interleaved_session.h"

#include "tipbench/gate/merge.h"

#include <fmt/format.h>

#include <chrono>
#include <random>

namespace tipbench::gate {

SessionResult run_interleaved(const SessionPlan& plan, const std::string& tag) {
  std::vector<Result> base_blocks;
  std::vector<Result> head_blocks;
  for (int block = 0; block < plan.blocks; ++block) {
    // Which binary goes first in this block: shuffled from the seed, so neither side always
    // inherits the other's warm caches or thermal state.
    std::mt19937_64 rng(plan.seed * 1000003u + static_cast<std::uint64_t>(block));
    const bool head_first = (rng() & 1u) != 0;
    const auto started = std::chrono::steady_clock::now();
    for (int k = 0; k < 2; ++k) {
      const bool head = (k == 0) == head_first;
      auto args = head ? plan.head_args : plan.base_args;
      args.insert(args.end(),
                  {"--blocks", "1", "--seed", std::to_string(plan.seed + static_cast<std::uint64_t>(block))});
      const std::string stem = fmt::format("{}/{}-{}-block{:03}", plan.work_dir, tag, head ? "head" : "base", block);
      Result r = run_once(head ? plan.head_binary : plan.base_binary, args, stem + ".json", stem + ".log");
      (head ? head_blocks : base_blocks).push_back(std::move(r));
    }
    fmt::print(stderr, "gate {}: block {}/{} done ({} first, {:.1f} s)\n", tag, block + 1, plan.blocks,
               head_first ? "head" : "base",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  return {merge_blocks(base_blocks), merge_blocks(head_blocks)};
}

}  // namespace tipbench::gate
