#include "tipbench/reports/findings.h"

namespace tipbench::reports {

std::vector<FindingRow> finding_rows(const SuiteResult& suite) {
  std::vector<FindingRow> rows;
  for (const auto& c : suite.cases) {
    const std::string levels = c.name.starts_with(suite.name + "/") ? c.name.substr(suite.name.size() + 1) : c.name;
    for (const auto& arm : c.arms) {
      const Comparison* throughput = find_comparison(c, arm.arm);
      if (!throughput) continue;
      const ArmResult* baseline = find_arm(c, throughput->baseline);
      const Comparison* memory =
          baseline && !baseline->memory_metric.empty() ? find_comparison(c, arm.arm, baseline->memory_metric) : nullptr;
      rows.push_back({levels, arm.arm, throughput->baseline, throughput, memory});
    }
  }
  return rows;
}

}  // namespace tipbench::reports
