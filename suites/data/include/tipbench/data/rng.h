// The data pipeline's random numbers: splitmix64, keyed by (seed, epoch, index, ...), so every
// image, crop and shuffle is the same on every platform, for any worker count or thread order
// (std::uniform_*_distribution differ between standard libraries). Example:
//   tipbench::data::Rng rng = tipbench::data::Rng::keyed({seed, epoch, index});
//   double u = rng.uniform();  std::int64_t k = rng.below(10);
#pragma once

#include <cstdint>
#include <initializer_list>

namespace tipbench::data {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // A generator whose stream depends on every key and their order.
  static Rng keyed(std::initializer_list<std::uint64_t> keys) {
    std::uint64_t h = 0x6a09e667f3bcc909ULL;
    for (std::uint64_t k : keys) h = mix(h ^ mix(k + 0x9e3779b97f4a7c15ULL));
    return Rng(h);
  }

  std::uint64_t next() { return mix(state_ += 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n) for n > 0 (modulo bias below n / 2^64: negligible here).
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

}  // namespace tipbench::data
