// Synthetic noise for the statistics tests. Our own normal draw (Box-Muller on 53-bit uniforms)
// instead of std::normal_distribution, whose output is implementation-defined: the rates the
// tests pin must not depend on the standard library.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace tipbench::testing {

class Noise {
 public:
  explicit Noise(std::uint64_t seed) : rng_(seed) {}

  double normal() {
    const double u1 = uniform_open();
    const double u2 = uniform_open();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }

  // Multiplicative noise with median 1 and coefficient of variation cv.
  double lognormal(double cv) {
    const double sigma = std::sqrt(std::log1p(cv * cv));
    return std::exp(sigma * normal());
  }

  double uniform() { return uniform_open(); }  // in (0, 1)

 private:
  double uniform_open() {  // in (0, 1), so log() stays finite
    return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
  }
  std::mt19937_64 rng_;
};

}  // namespace tipbench::testing
