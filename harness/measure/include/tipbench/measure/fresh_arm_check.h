// The device bundle's fresh-process check (docs/gpu.md, `run.sh check`, step `fresh-arms`): for
// every suite, the first arm its quick plan runs on DEVICE, one short trial in a child process
// (`tipbench __trial`) where nothing has touched the device before the trial begins. That is
// how a fresh-process trial, a DDP follower or the first suite of a run meets the device, and
// where an uninitialised CUDA context fails (the caching allocator's stats throw before CUDA's
// lazy initialisation). The parent plans and stages (prepare_run) on the cheapest model each
// suite supports; only the child measures. Hidden command: `tipbench __fresh-arms DEVICE [SUITE...]`.
// One line per suite on stdout:
//   ok       ARM  <median step> ms/step
//   skipped  SUITE: <reason every arm is skipped>
//   failed   ARM: <the error's first line>
#pragma once

#include <string>
#include <vector>

namespace tipbench {

// Returns 0 when no suite failed, 1 otherwise (2: an unknown suite or device, said on stderr).
int check_first_arms_in_fresh_processes(const std::string& self_executable, const std::string& device,
                                        const std::vector<std::string>& suites);

}  // namespace tipbench
