// The host checks of environment_warnings (host_checks.h).
#include "host_checks.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#ifndef TIPBENCH_BUILD_TYPE
#define TIPBENCH_BUILD_TYPE ""
#endif

namespace tipbench {

namespace {

void check_build(std::vector<std::string>& out) {
  std::string type = TIPBENCH_BUILD_TYPE;
  std::string lower = type;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
#if defined(__OPTIMIZE__)
  constexpr bool optimised = true;
#else
  constexpr bool optimised = false;
#endif
  if (lower != "debug" && optimised) return;
  out.push_back("tipbench was built " + (type.empty() ? std::string("without a build type") : "as " + type) +
                (optimised ? "" : " (no compiler optimisation)") +
                ", so host-side overheads are inflated and timings are not representative; "
                "rebuild with -DCMAKE_BUILD_TYPE=Release.");
}

void check_cpu_governor(std::vector<std::string>& out) {
  namespace fs = std::filesystem;
  std::map<std::string, int> not_performance;  // governor -> number of CPUs
  int cpus = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/sys/devices/system/cpu", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= 3 || name.compare(0, 3, "cpu") != 0 ||
        !std::all_of(name.begin() + 3, name.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
      continue;
    }
    std::ifstream in(it->path() / "cpufreq" / "scaling_governor");
    std::string governor;
    if (!in || !std::getline(in, governor)) continue;  // offline CPU or no cpufreq: unknown
    while (!governor.empty() && std::isspace(static_cast<unsigned char>(governor.back()))) {
      governor.pop_back();
    }
    ++cpus;
    if (governor != "performance") ++not_performance[governor];
  }
  if (not_performance.empty()) return;
  std::string which;
  int slow = 0;
  for (const auto& [governor, n] : not_performance) {
    if (!which.empty()) which += ", ";
    which += "'" + governor + "'";
    slow += n;
  }
  out.push_back("The CPU frequency governor is " + which + " on " + std::to_string(slow) + " of " +
                std::to_string(cpus) +
                " CPUs, not 'performance', so host-side work and data loading vary with clock "
                "ramp-up; set it with `sudo cpupower frequency-set -g performance`.");
}

// Other processes competing for the CPU: the 1-minute load average above the CPUs this process
// may use. Then CPU timings stall whenever a LibTorch intra-op thread is preempted, and host-side
// work (data loading, kernel launches) varies with the neighbours.
void check_cpu_load(std::vector<std::string>& out) {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  if (!(in >> load)) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cpus <= 0 || load <= cpus) return;
  out.push_back(
      fmt::format("The 1-minute load average is {:.1f} on {} CPUs: other processes compete with this "
                  "run for the CPU, so CPU-side timings will be noisy (expect [noisy] rows); run on "
                  "an idle machine for figures you want to keep.",
                  load, cpus));
}

}  // namespace

void check_host(std::vector<std::string>& out) {
  check_build(out);
  check_cpu_governor(out);
  check_cpu_load(out);
}

}  // namespace tipbench
