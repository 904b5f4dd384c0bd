// Conditions that make numbers untrustworthy, checked once before a run and printed up front:
// a debug build, other processes on the GPU, GPU clocks below max or throttling (NVML, loaded at
// run time when present), a CPU frequency governor other than "performance". Example:
//   for (const auto& w : tipbench::environment_warnings(true)) std::cerr << "warning: " << w << "\n";
#pragma once

#include <string>
#include <vector>

namespace tipbench {

// One human-readable sentence per problem found, each ending with what to do about it.
// Facts that could not be checked (no NVML) are reported as such, not as problems.
std::vector<std::string> environment_warnings(bool check_gpus);

}  // namespace tipbench
