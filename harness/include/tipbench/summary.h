// Turns raw trials into the summaries and comparisons of a case: arm summaries, then every
// treatment against the baseline as a ratio with a paired bootstrap CI and a verdict.
//   tipbench::summarize_case(case_result, settings);
#pragma once

#include "tipbench/result.h"
#include "tipbench/settings.h"

namespace tipbench {

void summarize_arm(ArmResult& arm);
// Fills arm summaries and case.comparisons from the trials. Only blocks where both arms have a
// trial are paired.
void summarize_case(CaseResult& c, const MeasureSettings& settings);

}  // namespace tipbench
