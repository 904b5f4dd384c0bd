#include "tipbench/statistics/block_order.h"

#include <random>
#include <utility>

namespace tipbench {

std::uint64_t fnv1a_64(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // the offset basis
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;  // the FNV prime
  }
  return hash;
}

std::vector<int> block_order(std::vector<int> arms, std::uint64_t seed, std::string_view case_name, int block) {
  // std::seed_seq keeps 32 bits of each value: both halves of the 64-bit ones go in.
  const std::uint64_t name = fnv1a_64(case_name);
  const auto low = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  std::seed_seq seq{low(seed), low(seed >> 32), low(name), low(name >> 32), static_cast<std::uint32_t>(block)};
  std::mt19937_64 rng(seq);
  for (std::size_t i = arms.size(); i > 1; --i) {  // Fisher-Yates with a portable draw
    std::swap(arms[i - 1], arms[rng() % i]);
  }
  return arms;
}

}  // namespace tipbench
