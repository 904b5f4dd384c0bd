#include "tipbench/gate/gate_config.h"

#include "tipbench/gate/cells.h"
#include "tipbench/gate/count_checks.h"
#include "tipbench/results/result.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>

namespace tipbench::gate {

namespace {

// {"throughput_samples_per_s": {"threshold_pct": 3}, ...} -> metric -> fraction.
std::map<std::string, double> parse_metrics(const nlohmann::json& j, const std::string& where,
                                            const std::string& origin) {
  if (!j.is_object()) throw InputError(fmt::format("{}: {} must be an object", origin, where));
  std::map<std::string, double> out;
  for (const auto& [metric, spec] : j.items()) {
    if (!is_known_metric(metric)) {
      throw InputError(fmt::format("{}: {}: unknown metric '{}'; valid: {}", origin, where, metric,
                                   fmt::join(known_metrics(), ", ")));
    }
    if (!spec.is_object()) {
      throw InputError(fmt::format("{}: {}.{} must be an object like {{\"threshold_pct\": 3}}", origin, where, metric));
    }
    for (const auto& [key, value] : spec.items()) {
      if (key != "threshold_pct") {
        throw InputError(fmt::format("{}: {}.{}: unknown key '{}'; valid: threshold_pct", origin, where, metric, key));
      }
      if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 100) {
        throw InputError(fmt::format("{}: {}.{}.threshold_pct must be a number in [0, 100]", origin, where, metric));
      }
    }
    if (!spec.contains("threshold_pct")) {
      throw InputError(fmt::format("{}: {}.{} needs \"threshold_pct\"", origin, where, metric));
    }
    out[metric] = spec.at("threshold_pct").get<double>() / 100;
  }
  return out;
}

// {"ops_per_step": {"tolerance_pct": 0}, ...} -> count metric -> fraction.
std::map<std::string, double> parse_counts(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object())
    throw InputError(origin + ": counts must be an object like {\"ops_per_step\": {\"tolerance_pct\": 0}}");
  std::map<std::string, double> out;
  for (const auto& [metric, spec] : j.items()) {
    if (!is_count_metric(metric)) {
      throw InputError(
          fmt::format("{}: counts: unknown metric '{}'; valid: {}", origin, metric, fmt::join(count_metrics(), ", ")));
    }
    if (!spec.is_object() || spec.size() != 1 || !spec.contains("tolerance_pct") ||
        !spec.at("tolerance_pct").is_number() || spec.at("tolerance_pct").get<double>() < 0 ||
        spec.at("tolerance_pct").get<double>() > 100) {
      throw InputError(
          fmt::format("{}: counts.{} must be {{\"tolerance_pct\": N}} with N in [0, 100]", origin, metric));
    }
    out[metric] = spec.at("tolerance_pct").get<double>() / 100;
  }
  return out;
}

// {"foreign_cpu_pct": 20, "steal_pct": 5, "gpu_thermal_pct": 10}: percentage points of difference allowed.
ConditionsBound parse_conditions(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin + ": conditions must be an object like {\"foreign_cpu_pct\": 20}");
  ConditionsBound bound;
  const std::map<std::string, double ConditionsBound::*> fields{{"foreign_cpu_pct", &ConditionsBound::foreign_cpu},
                                                                {"steal_pct", &ConditionsBound::steal},
                                                                {"gpu_thermal_pct", &ConditionsBound::gpu_thermal}};
  for (const auto& [key, value] : j.items()) {
    const auto field = fields.find(key);
    if (field == fields.end()) {
      throw InputError(fmt::format(
          "{}: conditions: unknown key '{}'; valid: foreign_cpu_pct, steal_pct, gpu_thermal_pct", origin, key));
    }
    if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 100) {
      throw InputError(fmt::format("{}: conditions.{} must be a number in [0, 100]", origin, key));
    }
    bound.*(field->second) = value.get<double>() / 100;
  }
  return bound;
}

// {"cpu": 0, "cuda": 0.5}: percent per device kind, each in [0, 50]; a kind left out keeps its default.
std::map<std::string, double> parse_between_run_floor(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) {
    throw InputError(origin + ": between_run_floor_pct must be an object like {\"cpu\": 1, \"cuda\": 0.5}");
  }
  std::map<std::string, double> floors = GateConfig{}.between_run_floor;
  for (const auto& [kind, value] : j.items()) {
    if (kind != "cpu" && kind != "cuda") {
      throw InputError(
          fmt::format("{}: between_run_floor_pct: unknown device kind '{}'; valid: cpu, cuda", origin, kind));
    }
    if (!value.is_number() || !(value.get<double>() >= 0 && value.get<double>() <= 50)) {
      throw InputError(fmt::format("{}: between_run_floor_pct.{} must be a number in [0, 50]", origin, kind));
    }
    floors[kind] = value.get<double>() / 100;
  }
  return floors;
}

nlohmann::json metrics_to_json(const std::map<std::string, double>& metrics) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [metric, fraction] : metrics) j[metric] = {{"threshold_pct", 100 * fraction}};
  return j;
}

}  // namespace

std::optional<double> GateConfig::threshold_for(const std::string& suite, const std::string& metric) const {
  if (auto s = suites.find(suite); s != suites.end()) {
    if (auto m = s->second.find(metric); m != s->second.end()) {
      return m->second > 0 ? std::optional<double>(m->second) : std::nullopt;
    }
  }
  if (auto m = metrics.find(metric); m != metrics.end() && m->second > 0) return m->second;
  return std::nullopt;
}

GateConfig GateConfig::for_device(const std::string& device) const {
  GateConfig out = *this;
  if (device == "cpu" && !cpu_metrics.empty()) out.metrics = cpu_metrics;
  const auto floor = between_run_floor.find(device.starts_with("cuda") ? "cuda" : "cpu");
  out.between_runs.floor = floor == between_run_floor.end() ? 0 : floor->second;
  return out;
}

std::vector<std::string> GateConfig::suite_names() const {
  std::vector<std::string> names;
  for (const auto& [name, metrics] : suites) names.push_back(name);
  return names;
}

GateConfig parse_gate_config(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin + ": the gate config must be a JSON object");
  GateConfig config;
  for (const auto& [key, value] : j.items()) {
    if (key == "description") {
      if (!value.is_string()) throw InputError(origin + ": description must be a string");
    } else if (key == "alpha") {
      if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() < 1)) {
        throw InputError(origin + ": alpha must be a number in (0, 1)");
      }
      config.alpha = value.get<double>();
    } else if (key == "metrics") {
      config.metrics = parse_metrics(value, "metrics", origin);
    } else if (key == "cpu_metrics") {
      config.cpu_metrics = parse_metrics(value, "cpu_metrics", origin);
    } else if (key == "conditions") {
      config.conditions = parse_conditions(value, origin);
    } else if (key == "counts") {
      config.counts = parse_counts(value, origin);
    } else if (key == "between_run_floor_pct") {
      config.between_run_floor = parse_between_run_floor(value, origin);
    } else if (key == "suites") {
      if (!value.is_object()) throw InputError(origin + ": suites must be an object");
      for (const auto& [suite, metrics] : value.items()) {
        config.suites[suite] = parse_metrics(metrics, "suites." + suite, origin);
      }
    } else {
      throw InputError(
          fmt::format("{}: unknown key '{}'; valid: description, alpha, metrics, cpu_metrics, suites, conditions, "
                      "counts, between_run_floor_pct",
                      origin, key));
    }
  }
  return config;
}

GateConfig read_gate_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the gate config");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  return parse_gate_config(j, path);
}

nlohmann::json gate_config_to_json(const GateConfig& config) {
  nlohmann::json suites = nlohmann::json::object();
  for (const auto& [suite, metrics] : config.suites) suites[suite] = metrics_to_json(metrics);
  nlohmann::json j = {{"alpha", config.alpha}, {"metrics", metrics_to_json(config.metrics)}, {"suites", suites}};
  if (!config.cpu_metrics.empty()) j["cpu_metrics"] = metrics_to_json(config.cpu_metrics);
  j["conditions"] = {{"foreign_cpu_pct", 100 * config.conditions.foreign_cpu},
                     {"steal_pct", 100 * config.conditions.steal},
                     {"gpu_thermal_pct", 100 * config.conditions.gpu_thermal}};
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [metric, tolerance] : config.counts) counts[metric] = {{"tolerance_pct", 100 * tolerance}};
  j["counts"] = counts;
  nlohmann::json floors = nlohmann::json::object();
  for (const auto& [kind, floor] : config.between_run_floor) floors[kind] = 100 * floor;
  j["between_run_floor_pct"] = floors;
  return j;
}

}  // namespace tipbench::gate
