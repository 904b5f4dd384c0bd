#include "run_options.h"

#include "tipbench/json_number.h"
#include "tipbench/registry.h"
#include "tipbench/result.h"

#include <fmt/format.h>

namespace tipbench::cli {

namespace {

// One table of (key, flag) keeps the JSON, the comparison and its messages in step.
struct Field {
  const char* key;
  const char* flag;
};
constexpr Field kFields[] = {
    {"suites", "--suite"},         {"models", "--model"},          {"device", "--device"},
    {"batch_size", "--batch-size"}, {"quick", "--quick"},          {"blocks", "--blocks"},
    {"threshold_pct", "--threshold"}, {"out", "--out"},            {"seed", "--seed"},
    {"inject_slowdown_pct", "--inject-slowdown"}, {"profile_dir", "--profile"}, {"nproc", "--nproc"},
    {"oversubscribe", "--oversubscribe"},
};

}  // namespace

nlohmann::json run_options_to_json(const RunOptions& o) {
  return {{"suites", o.suites},
          {"models", o.models},
          {"device", o.device},
          {"batch_size", o.batch_size},
          {"quick", o.quick},
          {"blocks", o.blocks},
          {"threshold_pct", o.threshold_pct},
          {"out", o.out},
          {"seed", o.seed},
          {"inject_slowdown_pct", o.inject_slowdown_pct},
          {"profile_dir", o.profile_dir},
          {"nproc", o.nproc},
          {"oversubscribe", o.oversubscribe},
          {"suite_options", o.suite_options}};
}

RunOptions run_options_from_json(const nlohmann::json& j) {
  RunOptions o;
  try {
    o.suites = j.at("suites").get<std::vector<std::string>>();
    o.models = j.at("models").get<std::vector<std::string>>();
    o.device = j.at("device").get<std::string>();
    o.batch_size = json_integer<std::int64_t>(j, "batch_size");
    o.quick = j.at("quick").get<bool>();
    o.blocks = json_integer<int>(j, "blocks");
    o.threshold_pct = j.at("threshold_pct").get<double>();
    o.out = j.at("out").get<std::string>();
    o.seed = json_integer<std::uint64_t>(j, "seed");
    o.inject_slowdown_pct = j.at("inject_slowdown_pct").get<double>();
    o.profile_dir = j.at("profile_dir").get<std::string>();
    o.nproc = json_integer<int>(j, "nproc");
    o.oversubscribe = j.at("oversubscribe").get<bool>();
    o.suite_options = j.at("suite_options").get<SuiteOptionValues>();
  } catch (const std::exception& e) {
    throw InputError(fmt::format("the run's options are damaged: {}", e.what()));
  }
  return o;
}

std::vector<std::string> run_option_differences(const RunOptions& here, const RunOptions& recorded) {
  const auto a = run_options_to_json(here);
  const auto b = run_options_to_json(recorded);
  std::vector<std::string> out;
  for (const auto& [key, flag] : kFields) {
    if (a.at(key) != b.at(key)) {
      out.push_back(fmt::format("{}: {} here, {} in the partial run", flag, a.at(key).dump(), b.at(key).dump()));
    }
  }
  for (const auto& [name, value] : here.suite_options) {
    const auto there = recorded.suite_options.find(name);
    const std::string before = there == recorded.suite_options.end() ? "unset" : there->second;
    if (before != value) out.push_back(fmt::format("--{}: \"{}\" here, \"{}\" in the partial run", name, value, before));
  }
  return out;
}

MeasureSettings measure_settings_from(const RunOptions& o) {
  MeasureSettings s = o.quick ? quick_settings() : MeasureSettings{};
  if (o.blocks > 0) s.blocks = o.blocks;
  if (o.threshold_pct > 0) s.practical_threshold = o.threshold_pct / 100;
  s.seed = o.seed;
  s.inject_slowdown_pct = o.inject_slowdown_pct;
  s.profile_dir = o.profile_dir;
  return s;
}

SuiteContext suite_context_from(const RunOptions& o, const c10::Device& device) {
  return {.device = device, .models = o.models, .batch_size = o.batch_size, .seed = o.seed, .quick = o.quick,
          .options = o.suite_options};
}

SuiteOptionValues default_suite_options() {
  SuiteOptionValues values;
  for (const auto& declared : declared_options()) values[declared.option.name] = declared.option.default_value;
  return values;
}

}  // namespace tipbench::cli
