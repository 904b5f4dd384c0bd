#include "tipbench/reports/run_set.h"

#include "tipbench/gate/cells.h"
#include "tipbench/reports/format.h"

#include <fmt/format.h>

namespace tipbench::reports {

std::vector<gate::RunComparison> compare_to_reference(const std::vector<NamedRun>& runs,
                                                      const gate::CompareOptions& options) {
  std::vector<gate::RunComparison> out;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    out.push_back(gate::compare_runs(runs.front().result, runs[i].result, options));
  }
  return out;
}

std::string format_delta(const gate::CellComparison& c) {
  const auto& e = c.test.estimate;
  return fmt::format("{:+.1f}% [{:+.1f}%, {:+.1f}%]", 100 * (e.ratio - 1), 100 * (e.ci_low - 1),
                     100 * (e.ci_high - 1));
}

}  // namespace tipbench::reports
