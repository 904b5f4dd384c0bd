// The order in which a block runs its arms: shuffled from the run seed, the case's name and the
// block number, and the same on every platform for the same three (a run is reproducible), while
// cases and blocks do not share one order. Example:
//   for (int arm : tipbench::block_order({0, 1, 2}, settings.seed, "zero_grad/model:m/batch:8", 3)) ...
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tipbench {

// 64-bit FNV-1a: a hash fixed by its definition, unlike std::hash, which differs between
// standard libraries (and so would give another block order on another toolchain).
std::uint64_t fnv1a_64(std::string_view text);

// `arms` (indices) in the block's order: a Fisher-Yates shuffle drawn from std::mt19937_64, whose
// output, like std::seed_seq's mixing, the C++ standard fixes.
std::vector<int> block_order(std::vector<int> arms, std::uint64_t seed, std::string_view case_name, int block);

}  // namespace tipbench
