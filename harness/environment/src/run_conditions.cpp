#include "tipbench/environment/run_conditions.h"

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

nlohmann::json optional_json(const std::optional<double>& v, double scale) {
  return v ? nlohmann::json(std::round(*v * scale) / scale) : nlohmann::json(nullptr);
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
  return std::nullopt;
}

nlohmann::json gpu_to_json(const GpuConditions& g) {
  return {{"gpu", g.gpu},
          {"sm_clock_mhz", optional_json(g.sm_clock_mhz, 1)},
          {"temperature_c", optional_json(g.temperature_c, 1)},
          {"power_w", optional_json(g.power_w, 10)},
          {"thermal_share", optional_json(g.thermal_share, 1e4)},
          {"power_capped_share", optional_json(g.power_capped_share, 1e4)},
          {"other_processes", g.other_processes ? nlohmann::json(*g.other_processes) : nlohmann::json(nullptr)},
          {"throttle_reasons", g.throttle_reasons}};
}

GpuConditions gpu_from_json(const nlohmann::json& j) {
  GpuConditions g;
  if (!j.is_object()) return g;
  if (j.contains("gpu") && j.at("gpu").is_string()) g.gpu = j.at("gpu").get<std::string>();
  g.sm_clock_mhz = number_at(j, "sm_clock_mhz");
  g.temperature_c = number_at(j, "temperature_c");
  g.power_w = number_at(j, "power_w");
  g.thermal_share = number_at(j, "thermal_share");
  g.power_capped_share = number_at(j, "power_capped_share");
  if (const auto n = number_at(j, "other_processes")) g.other_processes = static_cast<int>(*n);
  if (j.contains("throttle_reasons") && j.at("throttle_reasons").is_array()) {
    for (const auto& r : j.at("throttle_reasons")) {
      if (r.is_string()) g.throttle_reasons.push_back(r.get<std::string>());
    }
  }
  return g;
}

// The GPUs of runs one after another: violation shares weighted by wall time, the most other
// processes and the highest temperature, the last run's clock and power, every reason seen.
std::vector<GpuConditions> combine_gpus(const std::vector<RunConditions>& runs) {
  std::vector<GpuConditions> out = runs.front().gpus;
  const auto weighted = [&](std::size_t i, std::optional<double> GpuConditions::*share) -> std::optional<double> {
    double sum = 0, weight = 0;
    for (const auto& r : runs) {
      if (r.gpus.size() != out.size() || !(r.gpus[i].*share)) return std::nullopt;
      sum += *(r.gpus[i].*share) * std::max(r.wall_s, 1e-9);
      weight += std::max(r.wall_s, 1e-9);
    }
    return sum / weight;
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].thermal_share = weighted(i, &GpuConditions::thermal_share);
    out[i].power_capped_share = weighted(i, &GpuConditions::power_capped_share);
    for (const auto& r : runs) {
      if (r.gpus.size() != out.size()) continue;
      const auto& g = r.gpus[i];
      if (g.other_processes) out[i].other_processes = std::max(out[i].other_processes.value_or(0), *g.other_processes);
      if (g.temperature_c) out[i].temperature_c = std::max(out[i].temperature_c.value_or(0), *g.temperature_c);
      out[i].sm_clock_mhz = g.sm_clock_mhz;
      out[i].power_w = g.power_w;
      for (const auto& reason : g.throttle_reasons) {
        if (std::find(out[i].throttle_reasons.begin(), out[i].throttle_reasons.end(), reason) ==
            out[i].throttle_reasons.end()) {
          out[i].throttle_reasons.push_back(reason);
        }
      }
    }
  }
  return out;
}

}  // namespace

nlohmann::json conditions_to_json(const RunConditions& c) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  auto rounded = [](const std::optional<double>& v, double scale) { return optional_json(v, scale); };
  nlohmann::json j = {{"cpus", c.cpus},
                      {"wall_s", std::round(c.wall_s * 1000) / 1000},
                      {"foreign_cpu", rounded(c.foreign_cpu, 1e4)},
                      {"steal", rounded(c.steal, 1e4)},
                      {"load_average_start", opt(c.load_average_start)},
                      {"load_average_end", opt(c.load_average_end)},
                      {"cpu_mhz", rounded(c.cpu_mhz, 1)},
                      {"governor", opt(c.governor)}};
  if (!c.gpus.empty()) {  // a CUDA run's: absent from CPU runs and results before it
    j["gpus"] = nlohmann::json::array();
    for (const auto& g : c.gpus) j["gpus"].push_back(gpu_to_json(g));
  }
  return j;
}

nlohmann::json combine_conditions(const std::vector<nlohmann::json>& runs) {
  std::vector<RunConditions> recorded;
  for (const auto& j : runs) {
    if (j.is_object()) recorded.push_back(conditions_from_json(j));
  }
  if (recorded.empty()) return nullptr;
  RunConditions out = recorded.front();
  out.wall_s = 0;
  auto weighted = [&](std::optional<double> RunConditions::*field) -> std::optional<double> {
    double sum = 0, weight = 0;
    for (const auto& r : recorded) {
      if (!(r.*field)) return std::nullopt;  // a share over part of the span is no share of the whole
      sum += *(r.*field) * std::max(r.wall_s, 1e-9);
      weight += std::max(r.wall_s, 1e-9);
    }
    return sum / weight;
  };
  out.foreign_cpu = weighted(&RunConditions::foreign_cpu);
  out.steal = weighted(&RunConditions::steal);
  out.cpu_mhz = weighted(&RunConditions::cpu_mhz);
  for (const auto& r : recorded) out.wall_s += r.wall_s;
  out.load_average_end = recorded.back().load_average_end;
  out.gpus = combine_gpus(recorded);
  return conditions_to_json(out);
}

RunConditions conditions_from_json(const nlohmann::json& j) {
  RunConditions c;
  if (!j.is_object()) return c;
  auto number = [&](const char* key) -> std::optional<double> {
    if (j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
    return std::nullopt;
  };
  c.cpus = static_cast<int>(number("cpus").value_or(0));
  c.wall_s = number("wall_s").value_or(0);
  c.foreign_cpu = number("foreign_cpu");
  c.steal = number("steal");
  c.load_average_start = number("load_average_start");
  c.load_average_end = number("load_average_end");
  c.cpu_mhz = number("cpu_mhz");
  if (j.contains("governor") && j.at("governor").is_string()) c.governor = j.at("governor").get<std::string>();
  if (j.contains("gpus") && j.at("gpus").is_array()) {
    for (const auto& g : j.at("gpus")) c.gpus.push_back(gpu_from_json(g));
  }
  return c;
}

std::string conditions_warning(const nlohmann::json& conditions) {
  const RunConditions c = conditions_from_json(conditions);
  const ConditionsBound bound;
  const double foreign = c.foreign_cpu.value_or(0), steal = c.steal.value_or(0);
  for (const auto& g : c.gpus) {
    if (g.thermal_share.value_or(0) >= bound.gpu_thermal) {
      return fmt::format(
          "{}'s clocks were held down by heat (thermal slowdown) for {:.0f}% of this run: its times are not "
          "comparable with a cool run's; check its cooling (docs/gate.md)",
          g.gpu, 100 * *g.thermal_share);
    }
  }
  if (!shared_its_cpus(c, bound)) return "";
  return fmt::format(
      "other processes kept {:.0f}% of this run's CPUs busy and the hypervisor stole {:.0f}%: its times are not "
      "comparable with a quiet run's (a stored gate against a quiet baseline is INCONCLUSIVE; docs/gate.md)",
      100 * foreign, 100 * steal);
}

bool shared_its_cpus(const RunConditions& c, const ConditionsBound& bound) {
  return c.foreign_cpu.value_or(0) >= bound.foreign_cpu || c.steal.value_or(0) >= bound.steal;
}

std::string conditions_difference(const nlohmann::json& reference, const nlohmann::json& candidate,
                                  const ConditionsBound& bound) {
  const RunConditions a = conditions_from_json(reference), b = conditions_from_json(candidate);
  std::vector<std::string> why;
  if (a.foreign_cpu && b.foreign_cpu && std::abs(*a.foreign_cpu - *b.foreign_cpu) > bound.foreign_cpu) {
    why.push_back(
        fmt::format("other processes kept {:.0f}% of the CPUs busy during the reference run, {:.0f}% during "
                    "the compared one",
                    100 * *a.foreign_cpu, 100 * *b.foreign_cpu));
  }
  if (a.steal && b.steal && std::abs(*a.steal - *b.steal) > bound.steal) {
    why.push_back(
        fmt::format("the hypervisor stole {:.0f}% of the CPU time from the reference run, {:.0f}% from the "
                    "compared one",
                    100 * *a.steal, 100 * *b.steal));
  }
  if (a.governor && b.governor && *a.governor != *b.governor) {
    why.push_back(fmt::format("the CPU governor was {} for the reference run, {} for the compared one", *a.governor,
                              *b.governor));
  }
  for (std::size_t i = 0; i < std::min(a.gpus.size(), b.gpus.size()); ++i) {
    const auto &x = a.gpus[i], &y = b.gpus[i];
    if (x.thermal_share && y.thermal_share && std::abs(*x.thermal_share - *y.thermal_share) > bound.gpu_thermal) {
      why.push_back(
          fmt::format("{}'s clocks were held down by heat for {:.0f}% of the reference run, {:.0f}% of "
                      "the compared one",
                      y.gpu, 100 * *x.thermal_share, 100 * *y.thermal_share));
    }
    if (x.other_processes && y.other_processes && *x.other_processes != *y.other_processes) {
      why.push_back(
          fmt::format("{} other compute process(es) shared {} during the reference run, {} during the compared one",
                      *x.other_processes, y.gpu, *y.other_processes));
    }
  }
  if (why.empty()) return "";
  std::string text = why.front();
  for (std::size_t i = 1; i < why.size(); ++i) text += "; " + why[i];
  return fmt::format("{} (bound: {:.0f} points of CPU share, {:.0f} of steal)", text, 100 * bound.foreign_cpu,
                     100 * bound.steal);
}

}  // namespace tipbench
