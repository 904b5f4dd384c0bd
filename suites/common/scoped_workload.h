// A workload that owns a process-wide setting for its lifetime: the arm sets a global knob (TF32,
// deterministic algorithms) before building the workload, and the wrapper puts the knob back when
// the trial ends, so later trials and suites in the same process see the default again. It also
// records facts about the knob with the arm's info. Example:
//   return with_setting([] { return set_fp32_math(Fp32Math::ieee); },
//                       [&] { return make_training_workload(context, spec); }, fp32_math_info);
// A workload made with_setting may be kept between its trials (Workload::keep_between_trials,
// when the inner one allows it): the runner sets it aside after each trial, which puts the knob
// back for the other arms, and takes it back before the next, which sets the knob again.
#pragma once

#include "tipbench/suite/suite.h"

#include <functional>
#include <memory>

namespace tipbench::suites {

// Sets a knob and returns what puts the previous value back.
using ApplySetting = std::function<std::function<void()>()>;

// `apply` runs first, `build` under the setting, then `info_under_setting` (what the library
// reads back, merged into info()); the knob is put back when the workload is destroyed or set
// aside, and also when `build` throws.
std::unique_ptr<Workload> with_setting(const ApplySetting& apply,
                                       const std::function<std::unique_ptr<Workload>()>& build,
                                       const std::function<nlohmann::json()>& info_under_setting = nullptr);
// The knob already set by the caller: `restore` runs when the workload is destroyed, and the
// workload is never kept (it cannot set the knob again). `extra_info` is merged into info().
std::unique_ptr<Workload> with_restore(std::unique_ptr<Workload> inner, std::function<void()> restore,
                                       nlohmann::json extra_info = nlohmann::json::object());
enum class Keep {
  as_inner,  // kept between trials when the inner workload may be
  never,     // never: e.g. an arm at the largest batch that fits alone, which no other arm's kept
             // memory may share the device with
};
// Only the info: e.g. the largest-batch search that chose the workload's batch.
std::unique_ptr<Workload> with_info(std::unique_ptr<Workload> inner, nlohmann::json extra_info,
                                    Keep keep = Keep::as_inner);

}  // namespace tipbench::suites
