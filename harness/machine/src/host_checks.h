// What on this host makes timings untrustworthy, and what is deliberately not reported:
// - Build: a Debug build, or one compiled without optimisation, inflates host-side overheads.
// - CPU governor: any CPU whose cpufreq scaling_governor is not "performance". Where cpufreq is
//   not exposed (containers, many VMs) there is nothing to check and nothing is said: that is not
//   a problem we can see, and a line on every run there would teach people to ignore warnings.
// - CPU load: a 1-minute load average above the CPUs this process may use (others compete).
// Example (environment.cpp):
//   check_host(warnings);
#pragma once

#include <string>
#include <vector>

namespace tipbench {

// Appends one sentence per problem found, each ending with what to do about it.
void check_host(std::vector<std::string>& out);

}  // namespace tipbench
