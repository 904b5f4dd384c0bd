// A run's findings: per suite, one row per treatment whose throughput was compared with its case's
// baseline, with the memory comparison beside it. What the page's Findings table and the end of
// `tipbench run` on the console both show, so the two never disagree. Example:
//   for (const auto& row : finding_rows(suite)) fmt::print("{} vs {}\n", row.treatment, row.baseline);
#pragma once

#include "tipbench/results/result.h"

#include <string>
#include <vector>

namespace tipbench::reports {

struct FindingRow {
  std::string levels;  // the case without its suite's name: "model:small_cnn/batch:32"
  std::string treatment, baseline;
  const Comparison* throughput = nullptr;  // never null in a row
  const Comparison* memory = nullptr;      // the baseline's memory figure compared, or null
};

std::vector<FindingRow> finding_rows(const SuiteResult& suite);

}  // namespace tipbench::reports
