// Two runs, cell by cell: each side's median with a 95% interval and the candidate/reference
// ratio with a 95% interval and a p-value. Stored runs are unpaired (independent bootstraps of
// each side's blocks); runs from one interleaved session pair block by block. Example:
//   auto rc = tipbench::gate::compare_runs(base, head, {.paired = false});
//   for (const auto& c : rc.cells) c.test.estimate.ratio;
#pragma once

#include "tipbench/gate/between_runs.h"
#include "tipbench/explain/explain.h"
#include "tipbench/gate/cells.h"
#include "tipbench/statistics/stats.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::gate {

// A bootstrap needs a few values to resample: fewer per side (or paired blocks) and the cell is
// reported as not comparable instead of getting a made-up interval.
inline constexpr std::size_t kMinBlocks = 3;

struct CompareOptions {
  bool paired = false;  // blocks pair across the runs (same index = same interleaved block)
  std::size_t resamples = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 0;
  double practical_threshold = 0.03;  // for the verdict
  // Unpaired only: the spread between runs that no block shows, added to each interval
  // (stats::with_between_run_spread); null or a zero floor with nothing measured: none.
  const BetweenRunSpread* between_runs = nullptr;
};

struct CellComparison {
  CellKey key;
  bool paired = false;
  stats::MedianInterval reference;
  stats::MedianInterval candidate;
  stats::RatioTest test;  // candidate / reference
  // The noise the comparison has to beat: unpaired, the larger between-block CV of the two
  // sides; paired, the CV of the per-block ratios (drift common to a block cancels).
  double cv = 0;
  // Unpaired: the relative SD of one run's level the interval was widened by, and where it came
  // from ("0.50% (floor)"); 0 and "" when paired or not widened.
  double between_run_sd = 0;
  std::string between_run_source;
  stats::Verdict verdict = stats::Verdict::no_significant_difference;
  // Set by whoever compared two unpaired runs whose conditions of measurement differ beyond the
  // gate's bound (run_conditions.h): why. Such a comparison cannot confirm a regression.
  std::string unequal_conditions;
  // Which ops made the difference (explain.h), when both runs recorded step breakdowns (`run
  // --explain`): set for a confirmation re-run, which asks for them.
  std::optional<Explanation> why;
  double delta() const { return test.estimate.ratio - 1; }  // relative change, candidate vs reference
};

struct RunComparison {
  std::vector<CellComparison> cells;
  std::vector<CellKey> only_in_reference;
  std::vector<CellKey> only_in_candidate;
  std::vector<CellKey> too_few_blocks;
  std::string reference_slug;
  std::string candidate_slug;
  std::vector<std::string> fingerprint_differences;  // field names, empty when identical
};

// nullopt when a side has fewer than kMinBlocks values (paired: common blocks).
std::optional<CellComparison> compare_cell(const Cell& reference, const Cell& candidate, const CompareOptions& options);
RunComparison compare_runs(const Result& reference, const Result& candidate, const CompareOptions& options);

}  // namespace tipbench::gate
