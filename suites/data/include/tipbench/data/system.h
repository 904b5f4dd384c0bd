// What the data pipeline reads about its own process, Linux only: the cores it may run on, its
// CPU time, its resident memory. Example:
//   int cores = tipbench::data::available_cores();                 // honours taskset / cgroup cpusets
//   double busy = (process_cpu_seconds() - cpu0) / wall_seconds;   // cores kept busy
#pragma once

#include <cstdint>

namespace tipbench::data {

// CPUs this process may run on (sched_getaffinity), at least 1.
int available_cores();
// User + system CPU time of every thread of this process so far (getrusage(RUSAGE_SELF)).
double process_cpu_seconds();
// The resident set size now (VmRSS), or -1 when /proc/self/status cannot be read.
std::int64_t resident_set_bytes();

}  // namespace tipbench::data
