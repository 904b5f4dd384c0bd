// Several runs side by side: the first is the reference the others are compared with.
//   std::vector<NamedRun> runs{{"base", tipbench::read_result(a)}, {"head", tipbench::read_result(b)}};
//   auto cmp = compare_to_reference(runs, {.practical_threshold = 0.03});
#pragma once

#include "tipbench/gate/compare.h"
#include "tipbench/result.h"

#include <string>
#include <vector>

namespace tipbench::reports {

struct NamedRun {
  std::string label;  // what tables call the run (usually the file name)
  Result result;
};

// One RunComparison per run after the first, each against the first.
std::vector<gate::RunComparison> compare_to_reference(const std::vector<NamedRun>& runs,
                                                      const gate::CompareOptions& options);

// One machine's runs of different suites (a campaign spread over several device calls) as one
// run: the first run's context, then every run's suites in the order given; the label joins the
// labels with " + ". A later run's warnings, and its git where it differs, join the first's
// warnings, each prefixed with its label. Throws InputError naming the file when a run's fingerprint slug or
// measurement settings differ from the first's, or when a suite appears in two runs: those are comparisons, not one
// run.
NamedRun merge_runs_of_one_machine(const std::vector<NamedRun>& runs);

// "+2.6% [+1.0%, +4.1%]"
std::string format_delta(const gate::CellComparison& c);

}  // namespace tipbench::reports
