// The gate's verdict for people: a header, one line per check (PASS / FAIL / INCONCLUSIVE with
// the ratio, interval and why), problems, notes, recommendations, and `Result is: ...`; and the
// same as Markdown for a PR comment. Example:
//   tipbench::reports::print_gate_report(report, "base.json", "head.json", stdout);
#pragma once

#include "tipbench/gate/decision.h"

#include <cstdio>
#include <optional>
#include <string>

namespace tipbench::reports {

// `exit_code`: the code the process really exits with, when it is not the verdict's own (the
// verdict could not be written: 4); the last line always prints the real one.
void print_gate_report(const gate::GateReport& report, const std::string& baseline_label,
                       const std::string& current_label, std::FILE* out, std::optional<int> exit_code = std::nullopt);
std::string gate_markdown(const gate::GateReport& report, const std::string& baseline_label,
                          const std::string& current_label);

}  // namespace tipbench::reports
