// How one gate check is judged from its comparison: worse than the practical threshold, a
// regression ruled out by the interval, the verdict without a re-run, the one-line description,
// and the blocks that would resolve a noisy check. Shared by evaluate_gate, confirm_candidates
// and finish (decision.h) on a Check (check.h). Example:
//   if (worse_than(c, check.threshold)) check.detail = "worse: " + describe(c);
#pragma once

#include "tipbench/gate/check.h"

#include <cstddef>
#include <string>

namespace tipbench::gate {

// Worse than the practical threshold, on the metric's bad side.
bool worse_than(const CellComparison& c, double threshold);

// How bad a change is, in the metric's own direction (positive = worse), for sorting.
double badness(const CellComparison& c);

// "x0.950 [0.930, 0.970] (-5.0%), p=0.0010, CV 1.2%"
std::string describe(const CellComparison& c);

// Blocks per side that would shrink the interval to half the threshold on either side of the
// estimate (its width falls as 1/sqrt(blocks)), so that it either rules a threshold-size
// regression out or becomes significant.
std::size_t blocks_to_resolve(const CellComparison& c, double threshold);

// The check's status and detail from its comparison and its Holm significance, before any
// re-measurement: a significant, threshold-size worsening is a candidate.
void decide_without_rerun(Check& check);

}  // namespace tipbench::gate
