// The gate's "why": each failed check (or every check, on request) explained by the step
// breakdowns its runs recorded (`run --explain`; explain.h). A confirmation re-run asks for them
// (remeasure.h), so a FAIL is explained by the re-run that confirmed it; otherwise the two
// results' own breakdowns are used, or the explanation says why there is none. Example
// (apps/cli/gate/gate_interleaved.cpp):
//   gate::explain_checks(report, base, head, /*paired=*/true, /*every=*/flags.explain);
#pragma once

#include "tipbench/gate/decision.h"
#include "tipbench/results/result.h"

namespace tipbench::gate {

// The explanation of one cell: the candidate's arm against the reference's (suite, case and arm
// by name); `missing` says why not when an arm or its breakdowns are absent.
Explanation explain_cell(const CellKey& key, const Result& reference, const Result& candidate, bool paired);

void explain_checks(GateReport& report, const Result& reference, const Result& candidate, bool paired, bool every);

}  // namespace tipbench::gate
