// The coverage simulation behind the case comparisons' intervals (docs/measurement.md, "Coverage"):
// the paired t-interval on log-ratios covers the true ratio in at least 94% of 10,000 simulated
// cases at 3, 5, 8 and 20 blocks, for normal, skewed (lognormal) and one-outlier block noise, and
// so does the interval a sequential case stops with (block_looks.h). The percentile bootstrap it
// replaced is shown under-covering at 3 blocks. The printed rows are the docs' table.
#include "tipbench/statistics/block_looks.h"
#include "tipbench/statistics/settings.h"
#include "tipbench/statistics/stats.h"

#include "noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

namespace st = tipbench::stats;
using tipbench::MeasureSettings;
using tipbench::StopReason;
using tipbench::testing::Noise;

constexpr int kCases = 10000;
constexpr double kLeast = 0.94;
constexpr double kArmCv = 0.02;    // each measurement's own noise
constexpr double kDriftCv = 0.03;  // shared by the arms of a block: pairing cancels it

enum class Model { normal, lognormal, one_outlier };
const char* name_of(Model m) {
  switch (m) {
    case Model::normal: return "normal";
    case Model::lognormal: return "lognormal";
    case Model::one_outlier: return "one outlier";
  }
  return "?";
}

// One arm's noise factor. lognormal: exp(Z) standardised to mean 0 and SD 1 (skewness 6.2: rare
// slow-looking fast blocks and long right tails); one outlier: normal, and in one block of the
// case one arm (either, at random) loses 10% as if a neighbour had woken up.
double factor(Model m, double cv, Noise& noise) {
  if (m == Model::lognormal) {
    const double e = std::numbers::e;
    return 1 + cv * (std::exp(noise.normal()) - std::sqrt(e)) / std::sqrt((e - 1) * e);
  }
  return 1 + cv * noise.normal();
}

struct BlockPairs {
  std::vector<double> treatment, baseline;
};

BlockPairs simulate(Model m, std::size_t blocks, double true_ratio, Noise& noise, double cv = kArmCv) {
  BlockPairs p;
  for (std::size_t i = 0; i < blocks; ++i) {
    const double level = 100 * noise.lognormal(kDriftCv);
    p.treatment.push_back(true_ratio * level * factor(m, cv, noise));
    p.baseline.push_back(level * factor(m, cv, noise));
  }
  if (m == Model::one_outlier) {
    const auto block = static_cast<std::size_t>(noise.uniform() * static_cast<double>(blocks));
    (noise.uniform() < 0.5 ? p.treatment : p.baseline)[block] *= 0.9;
  }
  return p;
}

bool covers(const st::RatioEstimate& e, double truth) { return e.ci_low <= truth && truth <= e.ci_high; }

void print_row(const std::string& what, double coverage, const std::string& extra = "") {
  std::printf("[ coverage ] %-44s %6.2f%%%s\n", what.c_str(), 100 * coverage, extra.c_str());
}

const Model kModels[] = {Model::normal, Model::lognormal, Model::one_outlier};

TEST(IntervalCoverage, TIntervalCoversAtThreeFiveEightAndTwentyBlocks) {
  for (Model m : kModels) {
    for (std::size_t n : {3u, 5u, 8u, 20u}) {
      Noise noise(1000 * n + static_cast<std::uint64_t>(m));
      int hits = 0;
      for (int i = 0; i < kCases; ++i) {
        const BlockPairs p = simulate(m, n, 1.05, noise);
        hits += covers(st::paired_log_ratio_t(p.treatment, p.baseline).estimate, 1.05);
      }
      const double coverage = static_cast<double>(hits) / kCases;
      print_row(std::string("t, ") + name_of(m) + ", n=" + std::to_string(n), coverage);
      EXPECT_GE(coverage, kLeast) << name_of(m) << " at " << n << " blocks";
    }
  }
}

// Why the interval was replaced: a percentile bootstrap's interval lies inside the extreme block
// ratios, which hold the median ratio only 1 - 2^(1-n) of the time (75% at 3 blocks).
TEST(IntervalCoverage, PercentileBootstrapUnderCoversAtFewBlocks) {
  constexpr int kBootstrapCases = 2000;
  for (std::size_t n : {3u, 5u}) {
    Noise noise(77 + n);
    int hits = 0;
    for (int i = 0; i < kBootstrapCases; ++i) {
      const BlockPairs p = simulate(Model::normal, n, 1.05, noise);
      hits += covers(st::paired_ratio_of_medians(p.treatment, p.baseline, {.resamples = 500, .seed = 1}), 1.05);
    }
    const double coverage = static_cast<double>(hits) / kBootstrapCases;
    print_row("percentile bootstrap, normal, n=" + std::to_string(n), coverage);
    if (n == 3) EXPECT_LT(coverage, 0.90) << "the reason for the t-interval";
  }
}

// A sequential case (the defaults: looks at 5, 8, 13, 20 at 98.75% each) stops at the first look
// where its interval is precise or settled against the band; the interval it stops with still
// covers, at true ratios inside, on the edge of and outside the 2% band.
// kGpuCv: a GPU-bound arm's noise (0.02-0.08% between blocks on the committed H100 runs).
constexpr double kGpuCv = 0.0005;

TEST(IntervalCoverage, SequentialStoppingKeepsTheCoverage) {
  const MeasureSettings settings;
  const auto looks = tipbench::block_looks(settings);
  ASSERT_GT(looks.size(), 1u);
  const double confidence = tipbench::look_confidence(settings);
  for (double cv : {kArmCv, kGpuCv}) {
    for (Model m : kModels) {
      for (double truth : {1.0, 1.02, 1.05}) {
        Noise noise(static_cast<std::uint64_t>(truth * 1000) + 7 * static_cast<std::uint64_t>(m));
        int hits = 0;
        long blocks_used = 0;
        for (int i = 0; i < kCases; ++i) {
          const BlockPairs p = simulate(m, static_cast<std::size_t>(looks.back()), truth, noise, cv);
          for (int look : looks) {
            const auto n = static_cast<std::size_t>(look);
            const auto e =
                st::paired_log_ratio_t(std::span(p.treatment).first(n), std::span(p.baseline).first(n), confidence)
                    .estimate;
            if (look == looks.back() || tipbench::stop_reason(e, settings) != StopReason::unresolved) {
              hits += covers(e, truth);
              blocks_used += look;
              break;
            }
          }
        }
        const double coverage = static_cast<double>(hits) / kCases;
        char extra[64];
        std::snprintf(extra, sizeof extra, "  mean blocks %.1f", static_cast<double>(blocks_used) / kCases);
        print_row(std::string("sequential, ") + name_of(m) + ", cv " + std::to_string(100 * cv).substr(0, 4) +
                      "%, ratio " + std::to_string(truth).substr(0, 4),
                  coverage, extra);
        EXPECT_GE(coverage, kLeast) << name_of(m) << " at ratio " << truth << ", cv " << cv;
        if (cv == kGpuCv && m == Model::normal)
          EXPECT_EQ(blocks_used, 5L * kCases) << "a GPU's noise: the pilot is precise";
      }
    }
  }
}

}  // namespace
