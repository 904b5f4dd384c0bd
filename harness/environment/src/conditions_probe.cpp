#include "tipbench/environment/conditions_probe.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

namespace tipbench {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::optional<double> number_in(const std::string& path) {
  std::ifstream in(path);
  double v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

std::optional<double> load_average() { return number_in("/proc/loadavg"); }

std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i) {
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
    }
  }
  return cpus;
}

}  // namespace

// /proc/stat's per-CPU lines (user nice system idle iowait irq softirq steal ...) of the CPUs in
// this process's affinity, and /proc/self/stat's utime, stime, cutime, cstime (fields 14-17):
// both in USER_HZ ticks.
ConditionsProbe::Counters ConditionsProbe::read_counters() {
  Counters c;
  const auto mine = affinity_cpus();
  std::ifstream stat("/proc/stat");
  for (std::string line; std::getline(stat, line);) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream in(line.substr(3));
    int cpu = -1;
    std::uint64_t v[8] = {};
    in >> cpu;
    for (auto& x : v) in >> x;
    if (!in || (!mine.empty() && std::find(mine.begin(), mine.end(), cpu) == mine.end())) continue;
    const std::uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6];
    c.total += busy + v[3] + v[4] + v[7];
    c.busy += busy;
    c.steal += v[7];
    c.valid = true;
  }
  std::ifstream self("/proc/self/stat");
  std::string text;
  std::getline(self, text);
  const auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return Counters{};
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  std::uint64_t times[4] = {};
  for (int i = 3; i <= 17 && fields >> field; ++i) {
    if (i >= 14) times[i - 14] = std::stoull(field);
  }
  c.self = times[0] + times[1] + times[2] + times[3];
  return c;
}

ConditionsProbe::ConditionsProbe()
    : start_(read_counters()), start_seconds_(now_seconds()), load_start_(load_average()) {}

RunConditions ConditionsProbe::finish() const {
  RunConditions r;
  const Counters end = read_counters();
  const auto cpus = affinity_cpus();
  r.cpus = static_cast<int>(cpus.size());
  r.wall_s = now_seconds() - start_seconds_;
  if (start_.valid && end.valid && end.total > start_.total) {
    const double total = static_cast<double>(end.total - start_.total);
    const double busy = static_cast<double>(end.busy - start_.busy);
    const double self = static_cast<double>(end.self - start_.self);
    r.foreign_cpu = std::clamp((busy - self) / total, 0.0, 1.0);
    r.steal = static_cast<double>(end.steal - start_.steal) / total;
  }
  r.load_average_start = load_start_;
  r.load_average_end = load_average();
  double mhz = 0;
  int counted = 0;
  for (int cpu : cpus) {
    if (auto khz = number_in(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_cur_freq", cpu))) {
      mhz += *khz / 1000;
      ++counted;
    }
  }
  if (counted > 0) r.cpu_mhz = mhz / counted;
  std::ifstream governor("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  if (std::string g; governor >> g) r.governor = g;
  return r;
}

}  // namespace tipbench
