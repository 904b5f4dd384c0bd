// `tipbench gate --baseline FILE|auto --current FILE`: what both file modes (a stored baseline,
// and --paired) check and do alike.
#include "gate_modes.h"

#include "cli/shared/child_runs.h"
#include "gate_verdict.h"
#include "tipbench/gate/explain_checks.h"
#include "tipbench/common/error_text.h"
#include "tipbench/environment/fingerprint.h"

#include <fmt/format.h>

namespace tipbench::cli {

void check_result_identity(const Result& result, const std::string& path) {
  if (auto why = slug_identity_problem(result.context.fingerprint_slug, result.context.fingerprint)) {
    throw InputError(
        fmt::format("{}: {}: the file was edited or is not a tipbench result of that machine", path, *why));
  }
}

int gate_from_files(const GateFlags& f, const gate::GateConfig& config) {
  if (f.current.empty() || f.baseline.empty()) {
    throw UsageError("give --baseline FILE|auto and --current FILE, or --base-binary and --head-binary");
  }
  check_mode_flags(f, /*interleaved=*/false);
  if (!f.rerun_binary.empty() && !is_executable(f.rerun_binary)) {
    throw UsageError(fmt::format("--rerun-binary '{}' is not an executable file", abbreviated(f.rerun_binary)));
  }
  check_outputs(f, f.out_dir);
  const Result current = read_result(f.current);
  // Before `auto` looks the baseline up by this slug.
  check_result_identity(current, f.current);
  return f.paired ? gate_paired(f, config, current) : gate_stored(f, config, current);
}

int verdict_of_files(const GateFlags& f, const gate::GateConfig& config, const Result& baseline, const Result& current,
                     const std::string& baseline_path, const MakeRemeasure& make_remeasure) {
  const std::string work_dir = f.out_dir.empty() ? default_out_dir() : f.out_dir;
  const gate::GateConfig effective = config.for_device(current.context.device);  // cpu_metrics on a CPU
  auto report = gate::evaluate_gate(baseline, current, effective, {.paired = f.paired, .seed = f.seed});
  gate::Remeasure remeasure;
  if (!f.no_rerun) remeasure = make_remeasure(effective, work_dir);
  gate::confirm_candidates(report, remeasure, effective);
  gate::explain_checks(report, baseline, current, f.paired, f.explain);
  return deliver(f, report, baseline_path, f.current, f.out_dir);
}

}  // namespace tipbench::cli
