#include "run_options.h"

#include "tipbench/json_number.h"
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
    {"inject_slowdown_pct", "--inject-slowdown"}, {"data_dir", "--data"}, {"loader_only", "--loader-only"},
    {"corrupt_policy", "--corrupt-policy"}, {"nproc", "--nproc"}, {"oversubscribe", "--oversubscribe"},
    {"bucket_mb", "--bucket-mb"},
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
          {"data_dir", o.data_dir},
          {"loader_only", o.loader_only},
          {"corrupt_policy", o.corrupt_policy},
          {"nproc", o.nproc},
          {"oversubscribe", o.oversubscribe},
          {"bucket_mb", o.bucket_mb}};
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
    o.data_dir = j.at("data_dir").get<std::string>();
    o.loader_only = j.at("loader_only").get<bool>();
    o.corrupt_policy = j.at("corrupt_policy").get<std::string>();
    o.nproc = json_integer<int>(j, "nproc");
    o.oversubscribe = j.at("oversubscribe").get<bool>();
    o.bucket_mb = j.at("bucket_mb").get<double>();
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
  return out;
}

MeasureSettings measure_settings_from(const RunOptions& o) {
  MeasureSettings s = o.quick ? quick_settings() : MeasureSettings{};
  if (o.blocks > 0) s.blocks = o.blocks;
  if (o.threshold_pct > 0) s.practical_threshold = o.threshold_pct / 100;
  s.seed = o.seed;
  s.inject_slowdown_pct = o.inject_slowdown_pct;
  return s;
}

SuiteContext suite_context_from(const RunOptions& o, const c10::Device& device) {
  return {.device = device, .models = o.models, .batch_size = o.batch_size, .seed = o.seed, .quick = o.quick,
          .data_dir = o.data_dir, .loader_only = o.loader_only, .corrupt_policy = o.corrupt_policy,
          .bucket_mb = o.bucket_mb};
}

}  // namespace tipbench::cli
