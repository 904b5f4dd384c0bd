// The gate's rule for counted work (results/step_counts.h): an arm's counts per step in the
// current run against the baseline's, per metric within a tolerance (ci/gate-thresholds.json,
// "counts": exact for ops and kernels), with no statistics: counts do not depend on the machine's
// mood. More work beyond the tolerance FAILs the gate and names what moved (the ops, kernels,
// copies or syncs whose counts changed); less work is a note. Judged beside the times: a count
// FAIL says what its arm's time check said, and a time FAIL whose arm counted the same work says
// so (the machine, memory or contention, not the code's work). An instruction count's tolerance
// is never tighter than the counter's own spread between steps in either run. Example:
//   auto checks = compare_counts(baseline, current, config.counts, report.notes);
#pragma once

#include "tipbench/gate/check.h"
#include "tipbench/results/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tipbench::gate {

// The metrics a config may gate, with what each reads of an arm's counts (nullopt where the
// counts do not hold it: the device counts on a CPU).
std::vector<std::string> count_metrics();
bool is_count_metric(const std::string& metric);
std::optional<double> count_value(const StepCounts& counts, std::string_view metric);

enum class CountStatus { equal, within, more, less };
std::string_view to_string(CountStatus status);  // "EQUAL", "WITHIN", "FAIL", "LESS"

struct CountCheck {
  std::string suite, case_name, arm, metric;
  double baseline = 0, current = 0;
  // A fraction of the baseline's count; 0: exact. For instructions, at least either run's own
  // spread between its counted steps (StepCounts::instructions_spread).
  double tolerance = 0;
  CountStatus status = CountStatus::equal;
  // What moved, most first, up to five: "aten::add_ 36 -> 50".
  std::vector<std::string> moved;
  std::string time_status;  // the arm's time check beside it ("" when the gate has none)
  std::string detail;       // one line: the change and what moved
  bool fails() const { return status == CountStatus::more; }
  std::string label() const { return case_name + "/arm:" + arm + " " + metric; }
};

// Every gated metric of every arm whose counts both runs hold (no error, every counted step alike);
// a note for arms left out and why (a baseline before counted work, unsteady counts).
std::vector<CountCheck> compare_counts(const Result& baseline, const Result& current,
                                       const std::map<std::string, double>& tolerances,
                                       std::vector<std::string>& notes);

// Side by side: each count check learns its arm's time status, and each time check whose arm
// counted the same work (every count equal or within) says so in its detail.
void judge_side_by_side(std::vector<CountCheck>& counts, std::vector<Check>& times);

}  // namespace tipbench::gate
