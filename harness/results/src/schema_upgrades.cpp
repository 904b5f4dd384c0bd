#include "schema_upgrades.h"

namespace tipbench::detail {

MeasureSettings settings_known_keys(const nlohmann::ordered_json& j) {
  const nlohmann::json known = MeasureSettings{};
  nlohmann::json filtered = nlohmann::json::object();
  for (const auto& [key, value] : j.items()) {
    if (known.contains(key)) filtered[key] = nlohmann::json::parse(value.dump());
  }
  auto settings = filtered.get<MeasureSettings>();
  // Before schema 1.7 every run had a fixed number of blocks, and min_blocks was not recorded.
  if (!j.contains("min_blocks")) settings.min_blocks = settings.blocks;
  // Before schema 1.8 every trial built its workload anew.
  if (!j.contains("keep_workloads")) settings.keep_workloads = false;
  // Before schema 1.14 no run counted its work.
  if (!j.contains("count_steps")) settings.count_steps = 0;
  // Before schema 1.15 no run counted instructions.
  if (!j.contains("instructions")) settings.instructions = "off";
  return settings;
}

// Before 1.9 a significant change under the practical threshold was written
// no_significant_difference: its interval excludes 1, which is the rule of under_threshold.
void upgrade_verdicts_before_1_9(Result& r) {
  const SchemaVersion v = parse_schema_version(r.schema_version);
  if (v.major != 1 || !v.before(1, 9)) return;
  for (auto& suite : r.suites) {
    for (auto& c : suite.cases) {
      for (auto& cmp : c.comparisons) {
        const bool excludes_one = cmp.estimate.ci_low > 1 || cmp.estimate.ci_high < 1;
        if (cmp.verdict == stats::Verdict::no_significant_difference && excludes_one) {
          cmp.verdict = stats::Verdict::under_threshold;
        }
      }
    }
  }
}

}  // namespace tipbench::detail
