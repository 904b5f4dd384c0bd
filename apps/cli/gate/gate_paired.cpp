// `tipbench gate --paired --baseline BASE.json --current HEAD.json`: both sides of one interleaved
// session on one machine, paired block by block; candidates are confirmed by a new interleaved
// session of the same two binaries.
#include "gate_modes.h"

#include "tipbench/environment/fingerprint.h"

#include <fmt/format.h>

namespace tipbench::cli {

int gate_paired(const GateFlags& f, const gate::GateConfig& config, const Result& current) {
  if (f.baseline == "auto") throw UsageError("--paired needs the base result of the same session, not --baseline auto");
  const Result baseline = read_result(f.baseline);
  check_result_identity(baseline, f.baseline);
  // One interleaved session runs on one machine; its two sides may differ in software (a stack A/B).
  const auto& a = baseline.context.fingerprint;
  const auto& b = current.context.fingerprint;
  if (!same_hardware(a, b)) {
    throw InputError(
        fmt::format("--paired: {} and {} come from other hardware ({} vs {}: {}): paired blocks come "
                    "from one session on one machine",
                    f.baseline, f.current, baseline.context.fingerprint_slug, current.context.fingerprint_slug,
                    fingerprint_changes_text(a, b)));
  }
  return verdict_of_files(f, config, baseline, current, f.baseline,
                          [&](const gate::GateConfig& effective, const std::string& work_dir) {
                            return gate::paired_remeasure(baseline, current, work_dir, effective, f.seed);
                          });
}

}  // namespace tipbench::cli
