// The gate's verdict as JSON (`gate --json`, docs/gate.md).
#include "tipbench/gate/decision.h"

namespace tipbench::gate {

nlohmann::json gate_report_to_json(const GateReport& report) {
  auto comparison_json = [](const CellComparison& c) {
    return nlohmann::json{{"ratio", c.test.estimate.ratio},
                          {"ci95_low", c.test.estimate.ci_low},
                          {"ci95_high", c.test.estimate.ci_high},
                          {"p_value", c.test.p_value},
                          {"blocks", c.test.estimate.blocks},
                          {"paired", c.paired},
                          {"cv", c.cv},
                          {"reference_median", c.reference.median},
                          {"candidate_median", c.candidate.median}};
  };
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : report.checks) {
    nlohmann::json j = {{"suite", c.key.suite},
                        {"case", c.key.case_name},
                        {"arm", c.key.arm},
                        {"metric", c.key.metric},
                        {"status", to_string(c.status)},
                        {"threshold", c.threshold},
                        {"significant", c.significant},
                        {"candidate", c.candidate},
                        {"noisy", c.noisy},
                        {"detail", c.detail}};
    if (c.comparison) {
      j["comparison"] = comparison_json(*c.comparison);
      j["holm_alpha"] = c.holm_alpha;
    }
    if (c.rerun) j["rerun"] = comparison_json(*c.rerun);
    if (c.why) {
      j["why"] = nlohmann::json::parse(explanation_to_json(*c.why).dump());
      j["why"]["from_confirmation_run"] = c.why_from_rerun;
    }
    checks.push_back(std::move(j));
  }
  nlohmann::json count_checks = nlohmann::json::array();
  std::size_t counts_equal = 0;
  for (const auto& c : report.count_checks) {
    if (c.status == CountStatus::equal) {
      ++counts_equal;
      continue;
    }
    count_checks.push_back({{"suite", c.suite},
                            {"case", c.case_name},
                            {"arm", c.arm},
                            {"metric", c.metric},
                            {"status", to_string(c.status)},
                            {"baseline", c.baseline},
                            {"current", c.current},
                            {"tolerance", c.tolerance},
                            {"moved", c.moved},
                            {"time_status", c.time_status},
                            {"detail", c.detail}});
  }
  return {{"outcome", to_string(report.outcome)},
          {"exit_code", report.exit_code()},
          {"mode", report.mode},
          {"change_under_test", report.change_under_test},
          {"checks", checks},
          {"count_checks", count_checks},
          {"count_checks_equal", counts_equal},
          {"problems", report.problems},
          {"notes", report.notes},
          {"recommendations", report.recommendations}};
}

}  // namespace tipbench::gate
