// The dataloader suite's conclusions across arms (its result's `notes`): per training case, how
// long each grid cell's loop waited for data; per loader-only case, each cell's data-loading
// ceiling against the model's consumption rate (a paired ratio with a 95% CI and a verdict:
// input-bound, keeps up, about even); and which files were skipped as corrupt or missing.
//   sr.notes = dataloader_notes(suite_result, settings);
#pragma once

#include "tipbench/results/result.h"

#include <string>
#include <vector>

namespace tipbench::suites {

std::vector<std::string> dataloader_notes(const SuiteResult& result, const MeasureSettings& settings);

}  // namespace tipbench::suites
