// One trial of one arm in this process: prepare (untimed), warm up until stable (untimed), time
// the steps (CUDA events on the current stream, or the monotonic clock and the process CPU time on
// CPU), record memory; with settings.profile_dir, profile a few more steps after the last block's.
//   TrialOutcome t = tipbench::run_trial(suite, context, c, arm, settings, /*block=*/0, /*position=*/1);
// With a KeptArm slot (the runner's, in-process arms only) the workload is built once and kept for
// the arm's next trial of the case when it allows it (Workload::keep_between_trials).
#pragma once

#include "tipbench/results/result.h"
#include "tipbench/statistics/settings.h"
#include "tipbench/suite/suite.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace tipbench {

namespace detail {
struct KeptArm;
struct HeldMemory;
}  // namespace detail

struct TrialOutcome {
  Trial trial;
  nlohmann::json info;                // the workload's static facts
  std::string invalid_reason;         // Workload::invalid_reason(): the trial measured the wrong thing
  std::optional<ArmProfile> profile;  // settings.profile_dir set and this is the last block
};

// `kept`: the arm's slot (reused when it holds a workload, filled when the new one may be kept);
// `held_by_others`: what the case's other kept arms hold, taken out of this trial's memory.
TrialOutcome run_trial(const Suite& suite, const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                       const MeasureSettings& settings, int block, int position, detail::KeptArm* kept = nullptr,
                       const detail::HeldMemory* held_by_others = nullptr);

// The same trial in a child process (`<self_executable> __trial REQUEST RESPONSE`), for knobs
// whose state sticks to a process; `environment` is set (or replaced) in the child's environment.
// Throws std::runtime_error with the child's error.
TrialOutcome run_trial_in_fresh_process(const std::string& self_executable, const Suite& suite,
                                        const SuiteContext& context, int case_index, int arm_index,
                                        const MeasureSettings& settings, int block, int position,
                                        const std::map<std::string, std::string>& environment = {});

// The child's side: reads the request, calls `setup` with its context's process_setup (what the
// parent did to its own process before planning, e.g. load a model file), runs the trial, writes
// the response. Returns an exit code.
int serve_trial_request(const std::string& request_path, const std::string& response_path,
                        const std::function<void(const nlohmann::json&)>& setup);

}  // namespace tipbench
