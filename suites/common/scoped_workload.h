// A workload that owns a process-wide setting for its lifetime: the arm sets a global knob (TF32,
// deterministic algorithms) before building the workload, and the wrapper puts the knob back when
// the trial ends, so later trials and suites in the same process see the default again. It also
// records facts about the knob with the arm's info. Example:
//   const bool before = at::globalContext().allowTF32CuDNN();
//   at::globalContext().setAllowTF32CuDNN(true);
//   return with_restore(make_training_workload(context, spec),
//                       [before] { at::globalContext().setAllowTF32CuDNN(before); }, {{"cudnn_tf32", true}});
#pragma once

#include "tipbench/suite.h"

#include <functional>
#include <memory>

namespace tipbench::suites {

// `restore` runs when the returned workload is destroyed; `extra_info` is merged into info().
std::unique_ptr<Workload> with_restore(std::unique_ptr<Workload> inner, std::function<void()> restore,
                                       nlohmann::json extra_info = nlohmann::json::object());
// Only the info: e.g. the largest-batch search that chose the workload's batch.
std::unique_ptr<Workload> with_info(std::unique_ptr<Workload> inner, nlohmann::json extra_info);

}  // namespace tipbench::suites
