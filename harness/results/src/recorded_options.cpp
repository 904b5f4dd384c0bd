#include "tipbench/results/recorded_options.h"

#include "tipbench/common/error_text.h"
#include "tipbench/common/json_number.h"
#include "tipbench/common/real_number.h"
#include "tipbench/results/result.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <regex>

namespace tipbench {

namespace {

// One table of (key, flag) keeps the JSON, the comparison and its messages in step.
struct Field {
  const char* key;
  const char* flag;
};
constexpr Field kFields[] = {
    {"suites", "--suite"},
    {"models", "--model"},
    {"device", "--device"},
    {"batch_size", "--batch-size"},
    {"quick", "--quick"},
    {"blocks", "--blocks"},
    {"max_blocks", "--max-blocks"},
    {"precision_pct", "--precision"},
    {"trial_time_s", "--trial-time"},
    {"fresh_trials", "--fresh-trials"},
    {"threshold_pct", "--threshold"},
    {"out", "--out"},
    {"seed", "--seed"},
    {"inject_slowdown_pct", "--inject-slowdown"},
    {"profile_dir", "--profile"},
    {"inject_slowdown_op", "--inject-slowdown-op"},
    {"explain", "--explain"},
    {"explain_steps", "--explain-steps"},
    {"count_steps", "--count-steps"},
    {"instructions", "--instructions"},
    {"inject_extra_ops", "--inject-extra-ops"},
    {"nproc", "--nproc"},
    {"oversubscribe", "--oversubscribe"},
    {"model_file", "--model-file"},
    {"allow_trace", "--allow-trace"},
    {"allow_ops", "--allow-op"},
    {"model_input", "--model-input"},
    {"model_classes", "--model-classes"},
    {"jit_optimize", "--jit-optimize"},
};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

template <typename T>
bool within(T value, OptionRange<T> r) {
  return value >= r.min && value <= r.max;
}

std::string real_problem(const char* flag, double value, OptionRange<double> r, bool zero_is_preset) {
  if (!std::isfinite(value)) return fmt::format("{}: {} is not a finite number", flag, value);
  if (zero_is_preset && value == 0) return "";
  if (!within(value, r)) return fmt::format("{}: {:g} is not a number from {:g} to {:g}", flag, value, r.min, r.max);
  return "";
}

std::string whole_problem(const char* flag, std::int64_t value, OptionRange<std::int64_t> r, bool zero_is_preset) {
  if (zero_is_preset && value == 0) return "";
  if (!within(value, r)) return fmt::format("{}: {} is not a whole number from {} to {}", flag, value, r.min, r.max);
  return "";
}

}  // namespace

std::vector<std::string> model_file_problems(const RunOptions& o) {
  std::vector<std::string> out;
  if (o.model_file.empty()) {
    if (o.allow_trace) out.push_back("--allow-trace: applies to --model-file");
    if (!o.allow_ops.empty()) out.push_back("--allow-op: applies to --model-file");
    if (!o.model_input.empty()) out.push_back("--model-input: applies to --model-file");
    if (o.model_classes != 0) out.push_back("--model-classes: applies to --model-file");
    if (o.jit_optimize != "on") out.push_back("--jit-optimize: applies to --model-file");
  } else if (!o.models.empty()) {
    out.push_back("--model-file: the suites run on the file's model; give it or --model, not both");
  }
  static const std::regex kShape("[0-9]{1,6},[0-9]{1,6},[0-9]{1,6}");
  if (!o.model_input.empty() && !std::regex_match(o.model_input, kShape)) {
    out.push_back(
        fmt::format("--model-input: '{}' is not C,H,W (whole numbers, e.g. 3,224,224)", abbreviated(o.model_input)));
  }
  if (auto p = whole_problem("--model-classes", o.model_classes, kModelClassesRange, true); !p.empty())
    out.push_back(p);
  static const std::regex kOp(R"([A-Za-z_][A-Za-z0-9_]*::([A-Za-z_][A-Za-z0-9_]*|\*))");
  for (const auto& op : o.allow_ops) {
    if (!std::regex_match(op, kOp))
      out.push_back(fmt::format("--allow-op: '{}' is not NAMESPACE::OP or NAMESPACE::* (e.g. mylib::fused_gelu)",
                                abbreviated(op)));
  }
  if (o.jit_optimize != "on" && o.jit_optimize != "off") {
    out.push_back(fmt::format("--jit-optimize: '{}' is not on or off", abbreviated(o.jit_optimize)));
  }
  return out;
}

nlohmann::json run_options_to_json(const RunOptions& o) {
  return {{"suites", o.suites},
          {"models", o.models},
          {"device", o.device},
          {"batch_size", o.batch_size},
          {"quick", o.quick},
          {"blocks", o.blocks},
          {"max_blocks", o.max_blocks},
          {"precision_pct", o.precision_pct},
          {"trial_time_s", o.trial_time_s},
          {"fresh_trials", o.fresh_trials},
          {"threshold_pct", o.threshold_pct},
          {"out", o.out},
          {"seed", o.seed},
          {"inject_slowdown_pct", o.inject_slowdown_pct},
          {"profile_dir", o.profile_dir},
          {"inject_slowdown_op", o.inject_slowdown_op},
          {"explain", o.explain},
          {"explain_steps", o.explain_steps},
          {"count_steps", o.count_steps},
          {"instructions", o.instructions},
          {"inject_extra_ops", o.inject_extra_ops},
          {"nproc", o.nproc},
          {"oversubscribe", o.oversubscribe},
          {"model_file", o.model_file},
          {"allow_trace", o.allow_trace},
          {"allow_ops", o.allow_ops},
          {"model_input", o.model_input},
          {"model_classes", o.model_classes},
          {"jit_optimize", o.jit_optimize},
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
    // Since --explain (schema 1.12).
    o.inject_slowdown_op = j.value("inject_slowdown_op", "");
    o.explain = j.value("explain", false);
    o.explain_steps = j.contains("explain_steps") ? json_integer<int>(j, "explain_steps") : 3;
    // Since counted work (schema 1.14): a partial file written before it counted nothing.
    o.count_steps = j.contains("count_steps") ? json_integer<int>(j, "count_steps") : 0;
    // Since counted instructions (schema 1.15): a partial file written before them counted none.
    o.instructions = j.value("instructions", "off");
    o.inject_extra_ops = j.contains("inject_extra_ops") ? json_integer<int>(j, "inject_extra_ops") : 0;
    o.nproc = json_integer<int>(j, "nproc");
    o.oversubscribe = j.at("oversubscribe").get<bool>();
    o.suite_options = j.at("suite_options").get<SuiteOptionValues>();
    // Since the model-file flags: a partial file written before them has none.
    o.model_file = j.value("model_file", "");
    o.allow_trace = j.value("allow_trace", false);
    o.allow_ops = j.value("allow_ops", std::vector<std::string>{});  // since the .pt2 allow-list (issue 48)
    o.model_input = j.value("model_input", "");
    o.model_classes = j.contains("model_classes") ? json_integer<std::int64_t>(j, "model_classes") : 0;
    o.jit_optimize = j.value("jit_optimize", "on");
    // Since sequential blocks (schema 1.7): a partial file written before them has none.
    o.max_blocks = j.contains("max_blocks") ? json_integer<int>(j, "max_blocks") : 0;
    o.precision_pct = j.value("precision_pct", 0.0);
    o.trial_time_s = j.value("trial_time_s", 0.0);
    // Since kept workloads (schema 1.8): a run before them built every trial anew.
    o.fresh_trials = j.value("fresh_trials", true);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("the run's options are damaged: {}", e.what()));
  }
  return o;
}

std::vector<std::string> run_option_problems(const RunOptions& o, const RunOptionCatalogue& catalogue) {
  std::vector<std::string> out;
  auto add = [&](std::string problem) {
    if (!problem.empty()) out.push_back(std::move(problem));
  };
  if (o.suites.empty()) add("--suite: no suite");
  for (const auto& s : o.suites) {
    if (s != "all" && !contains(catalogue.suites, s)) add(fmt::format("--suite: '{}' is not a suite", abbreviated(s)));
  }
  for (const auto& m : o.models) {
    if (!contains(catalogue.models, m)) add(fmt::format("--model: '{}' is not a model", abbreviated(m)));
  }
  static const std::regex kDevice("auto|cpu|cuda|cuda:[0-9]{1,3}");
  if (!std::regex_match(o.device, kDevice)) {
    add(fmt::format("--device: '{}' is not auto, cpu, cuda or cuda:N", abbreviated(o.device)));
  }
  add(whole_problem("--batch-size", o.batch_size, kBatchSizeRange, true));
  add(whole_problem("--blocks", o.blocks, kBlocksRange, true));
  add(whole_problem("--max-blocks", o.max_blocks, kBlocksRange, true));
  if (o.blocks > 0 && o.max_blocks > 0) add("--max-blocks: --blocks fixes the count; give one of them");
  add(real_problem("--precision", o.precision_pct, kPrecisionPctRange, true));
  add(real_problem("--trial-time", o.trial_time_s, kTrialTimeRange, true));
  add(whole_problem("--nproc", o.nproc, kNprocRange, false));
  add(real_problem("--threshold", o.threshold_pct, kThresholdPctRange, true));
  add(real_problem("--inject-slowdown", o.inject_slowdown_pct, kInjectSlowdownPctRange, false));
  if (!o.inject_slowdown_op.empty() && !is_op_name(o.inject_slowdown_op))
    add(fmt::format("--inject-slowdown-op: '{}' is not an op name like aten::addmm",
                    abbreviated(o.inject_slowdown_op)));
  add(whole_problem("--explain-steps", o.explain_steps, kExplainStepsRange, false));
  add(whole_problem("--count-steps", o.count_steps, kCountStepsRange, true));
  if (o.instructions != "auto" && o.instructions != "callgrind" && o.instructions != "off")
    add(fmt::format("--instructions: '{}' is not auto, callgrind or off", abbreviated(o.instructions)));
  add(whole_problem("--inject-extra-ops", o.inject_extra_ops, kInjectExtraOpsRange, true));
  if (o.out.empty()) add("--out: empty");
  for (const auto& problem : model_file_problems(o)) add(problem);
  for (const auto& entry : o.suite_options) {
    const std::string& name = entry.first;  // named, not bound: a lambda captures it (clang 14)
    const std::string& value = entry.second;
    const auto declared = std::find_if(catalogue.options.begin(), catalogue.options.end(),
                                       [&](const SuiteOption& d) { return d.name == name; });
    if (declared == catalogue.options.end()) {
      add(fmt::format("--{}: no suite declares it", abbreviated(name)));
    } else if (declared->type == OptionType::flag) {
      if (value != "true" && value != "false" && !value.empty())
        add(fmt::format("--{}: '{}' is not true or false", name, abbreviated(value)));
    } else {
      add(declared->problem(value));
    }
  }
  return out;
}

std::vector<std::string> run_option_differences(const RunOptions& here, const RunOptions& recorded,
                                                const std::set<std::string>& typed) {
  const auto a = run_options_to_json(here);
  const auto b = run_options_to_json(recorded);
  std::vector<std::string> out;
  for (const auto& [key, flag] : kFields) {
    if (typed.contains(flag) && a.at(key) != b.at(key)) {
      out.push_back(fmt::format("{}: {} here, {} in the partial run", flag, a.at(key).dump(), b.at(key).dump()));
    }
  }
  for (const auto& [name, value] : here.suite_options) {
    if (!typed.contains("--" + name)) continue;
    const auto there = recorded.suite_options.find(name);
    const std::string before = there == recorded.suite_options.end() ? "unset" : there->second;
    if (before != value)
      out.push_back(fmt::format("--{}: \"{}\" here, \"{}\" in the partial run", name, value, before));
  }
  return out;
}

bool is_op_name(const std::string& text) {
  static const std::regex kOp("[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_.]*");
  return text.size() <= 200 && std::regex_match(text, kOp);
}

MeasureSettings measure_settings_from(const RunOptions& o) {
  MeasureSettings s = o.quick ? quick_settings() : MeasureSettings{};
  if (o.blocks > 0) s.min_blocks = s.blocks = o.blocks;  // a fixed count
  if (o.max_blocks > 0) {
    s.blocks = o.max_blocks;
    s.min_blocks = std::min(s.min_blocks, o.max_blocks);  // a cap at or below the pilot: a fixed count
  }
  if (o.precision_pct > 0) s.precision = o.precision_pct / 100;
  if (o.trial_time_s > 0) s.trial_min_time_s = o.trial_time_s;
  if (o.fresh_trials) s.keep_workloads = false;
  s.time_budget_s = o.time_budget_s;
  if (o.threshold_pct > 0) s.practical_threshold = o.threshold_pct / 100;
  s.seed = o.seed;
  s.inject_slowdown_pct = o.inject_slowdown_pct;
  s.profile_dir = o.profile_dir;
  s.inject_slowdown_op = o.inject_slowdown_op;
  s.explain_steps = o.explain ? o.explain_steps : 0;
  s.count_steps = o.count_steps;
  s.instructions = o.instructions;
  s.inject_extra_ops = o.inject_extra_ops;
  if (o.instructions == "callgrind") {
    // Under Callgrind a step is tens of times slower and its time is Callgrind's, not the
    // machine's: one block of the shortest trials, only for the counts (run_under_callgrind.h).
    s.min_blocks = s.blocks = 1;
    s.warmup_min_steps = s.warmup_max_steps = 1;
    s.trial_min_steps = 1;
    s.trial_min_time_s = 0;
  }
  if (!o.model_file.empty()) s.warmup_min_steps = std::max(s.warmup_min_steps, kModelFileWarmupMinSteps);
  return s;
}

ResumeFile read_resume_file(const std::string& path, const RunOptionCatalogue& catalogue) {
  ResumeFile r;
  r.partial = read_partial_run(path);
  try {
    r.options = run_options_from_json(r.partial.run_options);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
  if (const auto problems = run_option_problems(r.options, catalogue); !problems.empty()) {
    throw InputError(fmt::format("{}: the interrupted run's options are damaged: {}", path, fmt::join(problems, "; ")));
  }
  // The settings the options give must be the ones the finished cases were measured with.
  // (The time budget is the resuming command's own.)
  nlohmann::json given = measure_settings_from(r.options);
  nlohmann::json recorded = r.partial.result.context.settings;
  given.erase("time_budget_s");
  recorded.erase("time_budget_s");
  if (given != recorded) {
    std::vector<std::string> differ;
    for (const auto& [key, value] : given.items()) {
      if (!recorded.contains(key) || recorded.at(key) != value) differ.push_back(key);
    }
    throw InputError(
        fmt::format("{}: the interrupted run's options disagree with the settings its result recorded "
                    "({}): the file was edited",
                    path, fmt::join(differ, ", ")));
  }
  return r;
}

}  // namespace tipbench
