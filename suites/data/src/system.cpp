#include "tipbench/data/system.h"

#include "tipbench/environment/proc_status.h"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>

namespace tipbench::data {

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::int64_t resident_set_bytes() { return proc_status_bytes("VmRSS"); }

}  // namespace tipbench::data
