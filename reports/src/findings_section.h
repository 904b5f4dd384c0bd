// Internal to the reports: what a page about one run (or one machine's campaign, merged) says
// first. What each source claim came to: every comparison of a treatment with its case's
// baseline, in the harness's verdict words, under the suite's claim. Then the model FLOP
// utilisation per model and precision (mfu.h). And the builds that measured a merged run.
#pragma once

#include "tipbench/reports/run_set.h"

#include <string>

namespace tipbench::reports::detail {

std::string findings_section(const NamedRun& run);
// One row per file of a merged run: its build, time and suites; "" for a run of one file.
std::string builds_table(const NamedRun& run);

}  // namespace tipbench::reports::detail
