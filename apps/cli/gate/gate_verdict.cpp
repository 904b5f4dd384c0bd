#include "gate_verdict.h"

#include "tipbench/common/atomic_file.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/common/json_number.h"
#include "tipbench/reports/gate_report.h"
#include "tipbench/machine/run_context.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

namespace tipbench::cli {

namespace {

// The Markdown and JSON verdicts (where asked for). Returns why one could not be written, if so.
std::optional<std::string> write_outputs(const GateFlags& f, const gate::GateReport& report,
                                         const std::string& base_label, const std::string& current_label,
                                         const std::string& out_dir) {
  std::string md_path = f.markdown_path;
  std::string json_path = f.json_path;
  if (!out_dir.empty()) {
    if (md_path.empty()) md_path = out_dir + "/gate.md";
    if (json_path.empty()) json_path = out_dir + "/gate.json";
  }
  try {
    if (!md_path.empty()) {
      write_file_atomically(md_path, reports::gate_markdown(report, base_label, current_label));
      fmt::print("wrote {}\n", md_path);
    }
    if (!json_path.empty()) {
      write_file_atomically(json_path, checked_dump(gate::gate_report_to_json(report), 2, json_path) + "\n");
      fmt::print("wrote {}\n", json_path);
    }
  } catch (const std::exception& e) {
    return error_summary(e);
  }
  return std::nullopt;
}

}  // namespace

int deliver(const GateFlags& f, const gate::GateReport& report, const std::string& base_label,
            const std::string& current_label, const std::string& out_dir) {
  const auto problem = write_outputs(f, report, base_label, current_label, out_dir);
  const int code = problem ? exit_code::internal : report.exit_code();
  reports::print_gate_report(report, base_label, current_label, stdout, code);
  if (problem) fmt::print(stderr, "error: cannot write the gate's verdict: {}\n", *problem);
  return code;
}

void check_outputs(const GateFlags& f, const std::string& out_dir) {
  for (const auto& [flag, path] : {std::pair{"--markdown", f.markdown_path}, std::pair{"--json", f.json_path}}) {
    if (const auto problem = path.empty() ? std::nullopt : output_file_problem(path)) {
      throw UsageError(fmt::format("{} {}: cannot write there: {}", flag, abbreviated(path), *problem));
    }
  }
  if (const auto problem = out_dir.empty() ? std::nullopt : output_dir_problem(out_dir)) {
    throw UsageError(fmt::format("--out-dir {}: cannot write there: {}", abbreviated(out_dir), *problem));
  }
}

std::string default_out_dir() { return "results/gate/" + compact_utc_timestamp(); }

}  // namespace tipbench::cli
