// Several runs side by side: the first is the reference the others are compared with.
//   std::vector<NamedRun> runs{{"base", tipbench::read_result(a)}, {"head", tipbench::read_result(b)}};
//   auto cmp = compare_to_reference(runs, {.practical_threshold = 0.03});
#pragma once

#include "tipbench/gate/compare.h"
#include "tipbench/results/result.h"

#include <string>
#include <vector>

namespace tipbench::reports {

// One file of a run merged from several (merge_runs_of_one_machine): the build and time that
// measured its suites.
struct RunPart {
  std::string label;  // the file
  GitState git;
  std::string timestamp_utc;
  std::vector<std::string> suites;
};

struct NamedRun {
  std::string label;  // what tables call the run (usually the file name)
  Result result;
  // The files a merged run was made of, in the order given; empty for a run read from one file.
  std::vector<RunPart> parts{};  // `{}`: {label, result} initialisers need no value for it (no warning)
};

// One RunComparison per run after the first, each against the first.
std::vector<gate::RunComparison> compare_to_reference(const std::vector<NamedRun>& runs,
                                                      const gate::CompareOptions& options);

// One machine's runs of different suites (a campaign spread over several device calls) as one
// run: the first run's context, then every run's suites in the order given; the label is short
// ("12 runs"), and `parts` names each file with its build, time and suites. The warnings are the
// runs' distinct texts, once each, naming the files that had one when not all did. Throws
// InputError naming the file when a run's fingerprint slug or measurement settings differ from
// the first's, or when a suite appears in two runs: those are comparisons, not one run.
NamedRun merge_runs_of_one_machine(const std::vector<NamedRun>& runs);

// The distinct builds of a merged run's parts, in order of first appearance: "5502b76ff4fb",
// "827be34d510a (dirty)"; the run's own git for a run of one file.
std::vector<std::string> builds_of(const NamedRun& run);

// "+2.6% [+1.0%, +4.1%]"
std::string format_delta(const gate::CellComparison& c);

}  // namespace tipbench::reports
