// The context block of a result: who, where, when, with what. Example:
//   RunContext c = tipbench::make_run_context(argc, argv, device, settings);
#pragma once

#include "tipbench/results/result.h"
#include "tipbench/environment/this_process.h"  // compact_utc_timestamp, host_name, self_executable_path

#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace tipbench {

RunContext make_run_context(const std::vector<std::string>& argv, const c10::Device& device,
                            const MeasureSettings& settings);
// The git state of the source tree this binary was built from ("" outside a checkout), or
// $TIPBENCH_GIT_SHA (and $TIPBENCH_GIT_DIRTY=1) when set: a relocated binary names its build.
GitState source_git_state();

}  // namespace tipbench
