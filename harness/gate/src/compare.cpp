#include "tipbench/gate/compare.h"

#include "tipbench/environment/fingerprint.h"

#include <algorithm>
#include <map>

namespace tipbench::gate {

namespace {

stats::BootstrapOptions bootstrap(const CompareOptions& o) {
  return {.resamples = o.resamples, .confidence = o.confidence, .seed = o.seed};
}

}  // namespace

std::optional<CellComparison> compare_cell(const Cell& reference, const Cell& candidate,
                                           const CompareOptions& options) {
  std::vector<double> ref;
  std::vector<double> cand;
  if (options.paired) {
    for (const auto& [block, value] : candidate.by_block) {
      if (auto it = reference.by_block.find(block); it != reference.by_block.end()) {
        cand.push_back(value);
        ref.push_back(it->second);
      }
    }
  } else {
    ref = reference.values();
    cand = candidate.values();
  }
  if (ref.size() < kMinBlocks || cand.size() < kMinBlocks) return std::nullopt;

  CellComparison c;
  c.key = candidate.key;
  c.paired = options.paired;
  c.reference = stats::median_interval(ref, bootstrap(options));
  c.candidate = stats::median_interval(cand, bootstrap(options));
  if (options.paired) {
    c.test = stats::paired_ratio_test(cand, ref, bootstrap(options));
    std::vector<double> ratios(cand.size());
    for (std::size_t i = 0; i < cand.size(); ++i) ratios[i] = cand[i] / ref[i];
    c.cv = stats::coefficient_of_variation(ratios);
  } else {
    c.test = stats::unpaired_ratio_test(cand, ref, bootstrap(options));
    c.cv = std::max(stats::coefficient_of_variation(ref), stats::coefficient_of_variation(cand));
    if (options.between_runs != nullptr && options.between_runs->for_cell(c.key) > 0) {
      c.between_run_sd = options.between_runs->for_cell(c.key);
      c.between_run_source = options.between_runs->describe(c.key);
      c.test = stats::with_between_run_spread(c.test, c.between_run_sd, options.confidence);
    }
  }
  c.verdict = stats::decide(c.test.estimate, {.practical_threshold = options.practical_threshold,
                                              .higher_is_better = higher_is_better(c.key.metric)});
  return c;
}

RunComparison compare_runs(const Result& reference, const Result& candidate, const CompareOptions& options) {
  RunComparison out;
  out.reference_slug = reference.context.fingerprint_slug;
  out.candidate_slug = candidate.context.fingerprint_slug;
  out.fingerprint_differences = fingerprint_differences(reference.context.fingerprint, candidate.context.fingerprint);
  std::map<CellKey, Cell> ref_cells;
  for (auto& cell : extract_cells(reference)) ref_cells.emplace(cell.key, std::move(cell));
  for (const auto& cell : extract_cells(candidate)) {
    auto it = ref_cells.find(cell.key);
    if (it == ref_cells.end()) {
      out.only_in_candidate.push_back(cell.key);
      continue;
    }
    if (auto c = compare_cell(it->second, cell, options)) {
      out.cells.push_back(std::move(*c));
    } else {
      out.too_few_blocks.push_back(cell.key);
    }
    ref_cells.erase(it);
  }
  for (const auto& [key, cell] : ref_cells) out.only_in_reference.push_back(key);
  return out;
}

}  // namespace tipbench::gate
