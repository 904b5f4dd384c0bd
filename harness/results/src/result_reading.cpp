// The result document read: every part checked as it enters (names, a git sha, an op's name, the
// schema's major version; text bound for paths, Markdown, HTML and Python is checked here), and a
// document of an older minor version brought up to today's meaning (schema_upgrades.h).
#include "tipbench/results/result.h"

#include "schema_upgrades.h"
#include "tipbench/common/checked_text.h"
#include "tipbench/common/json_number.h"
#include "tipbench/results/recorded_options.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace tipbench {

using ojson = nlohmann::ordered_json;
using detail::settings_known_keys;
using detail::upgrade_verdicts_before_1_9;

namespace {

std::vector<OpTime> op_times_from_json(const ojson& j) {
  std::vector<OpTime> ops;
  for (const auto& op : j) {
    ops.push_back({op.at("name").get<std::string>(), op.at("self_ms_per_step").get<double>(),
                   json_integer<std::int64_t>(op, "calls_per_step")});
  }
  return ops;
}

ArmStatus arm_status_from(const std::string& s) {
  for (auto status : {ArmStatus::ok, ArmStatus::skipped, ArmStatus::failed, ArmStatus::invalid}) {
    if (to_string(status) == s) return status;
  }
  throw std::invalid_argument("unknown arm status '" + s + "'");
}

stats::Verdict verdict_from(const std::string& s) {
  using stats::Verdict;
  for (auto v : {Verdict::faster, Verdict::slower, Verdict::under_threshold, Verdict::no_significant_difference}) {
    if (stats::to_string(v) == s) return v;
  }
  throw std::invalid_argument("unknown verdict '" + s + "'");
}

Levels levels_from_json(const ojson& j) {
  Levels levels;
  for (const auto& [k, v] : j.items()) {
    levels.emplace_back(k, v.get<std::string>());
    check_name("a level's name", k);
    check_name("a level", levels.back().second);
  }
  return levels;
}

stats::Summary summary_from_json(const ojson& j) {
  stats::Summary s;
  s.median = j.at("median").get<double>();
  s.p10 = j.at("p10").get<double>();
  s.p90 = j.at("p90").get<double>();
  s.mean = j.at("mean").get<double>();
  s.cv = j.at("cv").get<double>();
  s.n = json_integer<std::size_t>(j, "n");
  return s;
}

template <typename T>
std::optional<T> get_optional(const ojson& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  T value;
  json_get_to(j.at(key), value, key);
  return value;
}

MemoryUse memory_from_json(const ojson& j) {
  MemoryUse m;
  m.peak_allocated_bytes = get_optional<std::int64_t>(j, "peak_allocated_bytes");
  m.peak_reserved_bytes = get_optional<std::int64_t>(j, "peak_reserved_bytes");
  m.timed_peak_allocated_bytes = get_optional<std::int64_t>(j, "timed_peak_allocated_bytes");
  m.peak_rss_growth_bytes = get_optional<std::int64_t>(j, "peak_rss_growth_bytes");
  return m;
}

ArmResult arm_from_json(const ojson& j) {
  ArmResult a;
  a.name = j.at("name").get<std::string>();
  a.arm = j.at("arm").get<std::string>();
  check_name("an arm's name", a.name);
  check_name("an arm's arm", a.arm);
  a.baseline = j.at("baseline").get<bool>();
  a.levels = levels_from_json(j.at("levels"));
  a.status = arm_status_from(j.at("status").get<std::string>());
  a.reason = j.value("reason", "");
  a.info = nlohmann::json::parse(j.at("info").dump());
  const auto& s = j.at("summary");
  a.step_time_ms = summary_from_json(s.at("step_time_ms"));
  a.throughput_samples_per_s = summary_from_json(s.at("throughput_samples_per_s"));
  if (s.contains("step_cpu_time_ms")) a.step_cpu_time_ms = summary_from_json(s.at("step_cpu_time_ms"));
  a.peak_memory_bytes = get_optional<std::int64_t>(s, "peak_memory_bytes");
  a.memory_metric = s.value("memory_metric", "");
  if (s.contains("metrics")) {
    for (const auto& [name, summary] : s.at("metrics").items()) a.metrics[name] = summary_from_json(summary);
  }
  if (j.contains("profile")) a.profile = profile_from_json(j.at("profile"));
  for (const auto& t : j.at("trials")) a.trials.push_back(trial_from_json(t));
  return a;
}

Comparison comparison_from_json(const ojson& j) {
  Comparison c;
  c.treatment = j.at("treatment").get<std::string>();
  c.baseline = j.at("baseline").get<std::string>();
  c.metric = j.at("metric").get<std::string>();
  for (const auto* name : {&c.treatment, &c.baseline, &c.metric}) check_name("a comparison's arm or metric", *name);
  c.estimate.ratio = j.at("ratio").get<double>();
  c.estimate.ci_low = j.at("ci95_low").get<double>();
  c.estimate.ci_high = j.at("ci95_high").get<double>();
  c.estimate.blocks = json_integer<std::size_t>(j, "blocks");
  c.verdict = verdict_from(j.at("verdict").get<std::string>());
  c.cv = j.value("cv", 0.0);  // absent before schema 1.2
  c.noisy = j.at("noisy").get<bool>();
  c.recommendation = j.value("recommendation", "");
  // Since 1.7; results before it ran a fixed number of blocks.
  c.stop = j.contains("stop") ? stop_reason_from_string(j.at("stop").get<std::string>()) : StopReason::fixed;
  c.blocks_to_resolve = j.contains("blocks_to_resolve") ? json_integer<std::size_t>(j, "blocks_to_resolve") : 0;
  return c;
}

CaseResult case_from_json(const ojson& j) {
  CaseResult c;
  c.name = j.at("name").get<std::string>();
  check_name("a case's name", c.name);
  c.params = levels_from_json(j.at("params"));
  for (const auto& a : j.at("arms")) c.arms.push_back(arm_from_json(a));
  for (const auto& cmp : j.at("comparisons")) c.comparisons.push_back(comparison_from_json(cmp));
  // Since 1.8.
  if (j.contains("wall_s")) {
    c.wall_s = j.at("wall_s").get<double>();
    if (!(c.wall_s >= 0)) throw std::invalid_argument("wall_s must be a number >= 0");
  }
  if (j.contains("budget_cut")) c.budget_cut = j.at("budget_cut").get<std::string>();
  return c;
}

RunContext context_from_json(const ojson& j) {
  RunContext c;
  c.tipbench_version = j.at("tipbench_version").get<std::string>();
  c.timestamp_utc = j.at("timestamp_utc").get<std::string>();
  c.hostname = j.at("hostname").get<std::string>();
  c.device = j.at("device").get<std::string>();
  c.fingerprint_slug = j.at("fingerprint_slug").get<std::string>();
  c.fingerprint = nlohmann::json::parse(j.at("fingerprint").dump()).get<Fingerprint>();
  c.git.sha = j.at("git").at("sha").get<std::string>();
  // Each becomes a path, a Markdown cell, an HTML text or a line of a Python comment downstream.
  check_git_sha("context.git.sha", c.git.sha);
  check_name("context.tipbench_version", c.tipbench_version);
  check_name("context.timestamp_utc", c.timestamp_utc);
  check_name("context.hostname", c.hostname);
  check_name("context.device", c.device);
  check_name("context.fingerprint_slug", c.fingerprint_slug);
  c.git.dirty = j.at("git").at("dirty").get<bool>();
  c.argv = j.at("argv").get<std::vector<std::string>>();
  c.settings = settings_known_keys(j.at("settings"));
  if (!c.settings.inject_slowdown_op.empty() && !is_op_name(c.settings.inject_slowdown_op))
    throw std::invalid_argument("context.settings.inject_slowdown_op is not an op name");
  c.warnings = j.at("warnings").get<std::vector<std::string>>();
  if (j.contains("model_file")) {
    c.model_file = nlohmann::json::parse(j.at("model_file").dump());
    if (!c.model_file.is_object() || !c.model_file.contains("sha256") || !c.model_file.at("sha256").is_string()) {
      throw std::invalid_argument("context.model_file has no sha256");
    }
    for (const char* key : {"name", "path"}) {
      if (c.model_file.contains(key) && c.model_file.at(key).is_string())
        check_name(std::string("context.model_file.") + key, c.model_file.at(key).get<std::string>());
    }
  }
  if (j.contains("conditions")) {
    c.conditions = nlohmann::json::parse(j.at("conditions").dump());
    if (!c.conditions.is_object()) throw std::invalid_argument("context.conditions is not an object");
  }
  return c;
}

void check_schema_version(const ojson& document, const std::string& origin) {
  if (document.is_object() && document.contains(kPartialRunMarker)) {
    throw InputError(
        fmt::format("{}: a partial run file (an interrupted run's finished cases), not a result: finish "
                    "it with tipbench run --resume {}; compare and report read it as it is",
                    origin, origin));
  }
  if (!document.is_object() || !document.contains("schema_version") || !document.at("schema_version").is_string()) {
    throw InputError(origin + ": not a tipbench result (no \"schema_version\")");
  }
  const auto version = document.at("schema_version").get<std::string>();
  const int major = parse_schema_version(version).major;
  if (major != kSchemaMajor) {
    throw InputError(fmt::format("{}: result schema version {} is not supported; this tipbench reads {}.x{}", origin,
                                 version, kSchemaMajor,
                                 major > kSchemaMajor ? " (the file is newer: upgrade tipbench)" : ""));
  }
}

}  // namespace

ArmProfile profile_from_json(const ojson& j) {
  ArmProfile p;
  p.trace_file = j.at("trace_file").get<std::string>();
  check_name("a profile's trace_file", p.trace_file);
  p.steps = json_integer<int>(j, "steps");
  p.top_cpu_ops = op_times_from_json(j.at("top_cpu_ops"));
  p.top_cuda_kernels = op_times_from_json(j.at("top_cuda_kernels"));
  p.error = j.value("error", "");
  return p;
}

Trial trial_from_json(const ojson& j) {
  Trial t;
  t.block = json_integer<int>(j, "block");
  t.position = json_integer<int>(j, "position");
  t.warmup_steps = json_integer<int>(j, "warmup_steps");
  t.warmup_stable = j.at("warmup_stable").get<bool>();
  // Since 1.8; every trial before it built its workload.
  if (j.contains("reused_workload")) t.reused_workload = j.at("reused_workload").get<bool>();
  t.samples_per_step = json_integer<std::int64_t>(j, "samples_per_step");
  t.throughput_samples_per_s = j.at("throughput_samples_per_s").get<double>();
  t.memory = memory_from_json(j.at("memory"));
  if (j.contains("metrics")) t.metrics = j.at("metrics").get<std::map<std::string, double>>();
  t.step_times_ms = j.at("step_times_ms").get<std::vector<double>>();
  if (j.contains("step_cpu_times_ms")) t.step_cpu_times_ms = j.at("step_cpu_times_ms").get<std::vector<double>>();
  if (j.contains("breakdown")) t.breakdown = breakdown_from_json(j.at("breakdown"));
  if (j.contains("counts")) t.counts = step_counts_from_json(j.at("counts"));
  return t;
}

CaseResult case_from_document(const nlohmann::ordered_json& j) { return case_from_json(j); }

Result parse_result(const ojson& document, const std::string& origin) {
  check_schema_version(document, origin);
  try {
    Result r;
    r.schema_version = document.at("schema_version").get<std::string>();
    r.context = context_from_json(document.at("context"));
    for (const auto& s : document.at("suites")) {
      SuiteResult suite;
      suite.name = s.at("name").get<std::string>();
      check_name("a suite's name", suite.name);
      suite.description = s.at("description").get<std::string>();
      suite.isolation = s.at("isolation").get<std::string>();
      if (s.contains("source_claim")) {
        const auto& claim = s.at("source_claim");
        suite.source_claim = SourceClaim{claim.at("sources").get<std::string>(), claim.at("claim").get<std::string>()};
      }
      if (s.contains("chart")) suite.chart = chart_kind_from_string(s.at("chart").get<std::string>());
      for (const auto& c : s.at("cases")) suite.cases.push_back(case_from_json(c));
      if (s.contains("notes")) suite.notes = s.at("notes").get<std::vector<std::string>>();
      r.suites.push_back(std::move(suite));
    }
    upgrade_verdicts_before_1_9(r);
    return r;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: does not match result schema {}: {}", origin, schema_version(), e.what()));
  }
}

ojson read_json_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(fmt::format("{}: a folder, not a {} file", path, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the {} file", path, what));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw InputError(fmt::format("{}: cannot read the {} file", path, what));
  try {
    return ojson::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw InputError(fmt::format("{}: not valid JSON (truncated or corrupt?): {}", path, e.what()));
  }
}

Result read_result(const std::string& path) { return parse_result(read_json_file(path, "result"), path); }

Result parse_result_text(const std::string& text, const std::string& origin) {
  ojson document;
  try {
    document = ojson::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw InputError(fmt::format("{}: not valid JSON (truncated or corrupt?): {}", origin, e.what()));
  }
  return parse_result(document, origin);
}

}  // namespace tipbench
