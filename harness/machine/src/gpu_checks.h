// The GPUs this process uses, checked through NVML (libnvidia-ml, loaded at run time when present,
// so neither nvml.h nor the library is needed to build or run): other compute processes on them,
// and the active clock throttle reasons. An SM clock below max at idle is normal (idle clocks,
// application-clock settings), so only the throttle reasons that slow a loaded GPU are reported.
// Without NVML one line says these could not be checked. Call before the first CUDA work: our own
// process is excluded by pid, but inside a container NVML reports host pids, so a context we
// already created could be listed as "other". Example (environment.cpp):
//   if (check_gpus_too) check_gpus(warnings);
#pragma once

#include <string>
#include <vector>

namespace tipbench {

// Appends one sentence per problem found, each ending with what to do about it.
void check_gpus(std::vector<std::string>& out);

}  // namespace tipbench
