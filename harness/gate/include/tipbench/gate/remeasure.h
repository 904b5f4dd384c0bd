// How the gate re-measures its regression candidates (Remeasure, decision.h) in child runs,
// grouped by case so each case runs once for all its flagged cells. Paired modes (--paired and
// --base-binary/--head-binary) run both sides again interleaved; a stored baseline runs the
// current side again and compares it with the baseline. Example (apps/cli/gate/gate_stored.cpp):
//   gate::confirm_candidates(report, gate::stored_remeasure(baseline, current, binary, work_dir, config), config);
#pragma once

#include "tipbench/gate/decision.h"
#include "tipbench/results/result.h"

#include <cstdint>
#include <string>

namespace tipbench::gate {

// The binary that re-measures a result: `preferred` when given, else the one that made it (when
// it can still be executed), else this one.
std::string binary_of(const Result& r, const std::string& preferred);

// Re-runs both sides interleaved, each with the arguments its result was made with. The results
// and `config` must outlive the returned function.
Remeasure paired_remeasure(const Result& base, const Result& head, const std::string& work_dir,
                           const GateConfig& config, std::uint64_t seed);

// Re-runs the current side only with `binary` and compares it with the baseline again. The
// results and `config` must outlive the returned function.
Remeasure stored_remeasure(const Result& baseline, const Result& current, const std::string& binary,
                           const std::string& work_dir, const GateConfig& config);

}  // namespace tipbench::gate
