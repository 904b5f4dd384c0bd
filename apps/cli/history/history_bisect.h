// Internal to the CLI: `tipbench history bisect`: walks the commits between a regression's two
// sides (git's first-parent line of --repo) with the three-way verdict of history_confirm.h,
// each commit's build against the last good one, until the first commit with the regression is
// named. Like `git bisect`, it assumes one step: every commit after the culprit carries it.
// Example:
//   return bisect_regression(report, devices, {.repo = "."}, confirm_options);
#pragma once

#include "history_confirm.h"

#include <cstdint>
#include <map>
#include <string>

namespace tipbench::cli {

struct BisectRequest {
  std::string good, bad;  // "" = the change point's two sides (the runs' commits)
  std::string repo = ".";
  std::string json_out;
};

// The regression of the one series matching the report's filter (the newest, new ones first).
// Exit 1 when the first commit with it is named; 0 when the two ends measure the same (not
// reproduced) or no regression was found; 3 when a step could not tell (the range so far is
// printed). Throws UsageError (more than one series, a bad commit range), ChildRunError.
int bisect_regression(const history::DetectReport& report, const std::map<std::int64_t, std::string>& device_of_run,
                      const BisectRequest& request, const history::ConfirmOptions& options);

}  // namespace tipbench::cli
