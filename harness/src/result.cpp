#include "tipbench/result.h"

#include "tipbench/checked_text.h"
#include "tipbench/atomic_file.h"
#include "tipbench/json_number.h"
#include "tipbench/recorded_options.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sstream>

namespace tipbench {

using ojson = nlohmann::ordered_json;

std::string schema_version() { return fmt::format("{}.{}", kSchemaMajor, kSchemaMinor); }

SchemaVersion parse_schema_version(const std::string& text) {
  SchemaVersion v;
  char dot = 0;
  std::istringstream in(text);
  if (!(in >> v.major)) return {};
  if (!(in >> dot >> v.minor) || dot != '.') v.minor = -1;
  return v;
}

std::string_view to_string(ArmStatus status) {
  switch (status) {
    case ArmStatus::ok: return "ok";
    case ArmStatus::skipped: return "skipped";
    case ArmStatus::failed: return "failed";
    case ArmStatus::invalid: return "invalid";
  }
  return "unknown";
}

namespace {

ojson op_times_to_json(const std::vector<OpTime>& ops) {
  ojson j = ojson::array();
  for (const auto& op : ops) {
    j.push_back({{"name", op.name}, {"self_ms_per_step", op.self_ms_per_step}, {"calls_per_step", op.calls_per_step}});
  }
  return j;
}

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

ojson levels_to_json(const Levels& levels) {
  ojson j = ojson::object();
  for (const auto& [k, v] : levels) j[k] = v;
  return j;
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

ojson summary_to_json(const stats::Summary& s) {
  return {{"median", s.median}, {"p10", s.p10}, {"p90", s.p90}, {"mean", s.mean}, {"cv", s.cv}, {"n", s.n}};
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
void put_optional(ojson& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

template <typename T>
std::optional<T> get_optional(const ojson& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  T value;
  json_get_to(j.at(key), value, key);
  return value;
}

ojson memory_to_json(const MemoryUse& m) {
  ojson j = ojson::object();
  put_optional(j, "peak_allocated_bytes", m.peak_allocated_bytes);
  put_optional(j, "peak_reserved_bytes", m.peak_reserved_bytes);
  put_optional(j, "timed_peak_allocated_bytes", m.timed_peak_allocated_bytes);
  put_optional(j, "peak_rss_growth_bytes", m.peak_rss_growth_bytes);
  return j;
}

MemoryUse memory_from_json(const ojson& j) {
  MemoryUse m;
  m.peak_allocated_bytes = get_optional<std::int64_t>(j, "peak_allocated_bytes");
  m.peak_reserved_bytes = get_optional<std::int64_t>(j, "peak_reserved_bytes");
  m.timed_peak_allocated_bytes = get_optional<std::int64_t>(j, "timed_peak_allocated_bytes");
  m.peak_rss_growth_bytes = get_optional<std::int64_t>(j, "peak_rss_growth_bytes");
  return m;
}

ojson arm_to_json(const ArmResult& a) {
  ojson j = {{"name", a.name},
             {"arm", a.arm},
             {"baseline", a.baseline},
             {"levels", levels_to_json(a.levels)},
             {"status", to_string(a.status)}};
  if (!a.reason.empty()) j["reason"] = a.reason;
  j["info"] = ojson(a.info);
  j["summary"] = {{"step_time_ms", summary_to_json(a.step_time_ms)},
                  {"throughput_samples_per_s", summary_to_json(a.throughput_samples_per_s)}};
  if (a.step_cpu_time_ms) j["summary"]["step_cpu_time_ms"] = summary_to_json(*a.step_cpu_time_ms);
  if (a.peak_memory_bytes) {
    j["summary"]["peak_memory_bytes"] = *a.peak_memory_bytes;
    j["summary"]["memory_metric"] = a.memory_metric;
  }
  if (!a.metrics.empty()) {
    ojson metrics = ojson::object();
    for (const auto& [name, summary] : a.metrics) metrics[name] = summary_to_json(summary);
    j["summary"]["metrics"] = metrics;
  }
  if (a.profile) j["profile"] = profile_to_json(*a.profile);
  j["trials"] = ojson::array();
  for (const auto& t : a.trials) j["trials"].push_back(trial_to_json(t));
  return j;
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

ojson comparison_to_json(const Comparison& c) {
  ojson j = {{"treatment", c.treatment},
             {"baseline", c.baseline},
             {"metric", c.metric},
             {"ratio", c.estimate.ratio},
             {"ci95_low", c.estimate.ci_low},
             {"ci95_high", c.estimate.ci_high},
             {"blocks", c.estimate.blocks},
             {"verdict", stats::to_string(c.verdict)},
             {"cv", c.cv},
             {"noisy", c.noisy},
             {"stop", to_string(c.stop)}};
  if (c.stop == StopReason::unresolved) j["blocks_to_resolve"] = c.blocks_to_resolve;
  if (!c.recommendation.empty()) j["recommendation"] = c.recommendation;
  return j;
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

ojson case_to_json(const CaseResult& c) {
  ojson j = {{"name", c.name},
             {"params", levels_to_json(c.params)},
             {"arms", ojson::array()},
             {"comparisons", ojson::array()}};
  for (const auto& a : c.arms) j["arms"].push_back(arm_to_json(a));
  for (const auto& cmp : c.comparisons) j["comparisons"].push_back(comparison_to_json(cmp));
  j["wall_s"] = c.wall_s;
  if (!c.budget_cut.empty()) j["budget_cut"] = c.budget_cut;
  return j;
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

ojson context_to_json(const RunContext& c) {
  ojson settings = ojson(nlohmann::json(c.settings));
  ojson out = {{"tipbench_version", c.tipbench_version},
               {"timestamp_utc", c.timestamp_utc},
               {"hostname", c.hostname},
               {"device", c.device},
               {"fingerprint_slug", c.fingerprint_slug},
               {"fingerprint", ojson(nlohmann::json(c.fingerprint))},
               {"git", {{"sha", c.git.sha}, {"dirty", c.git.dirty}}},
               {"argv", c.argv},
               {"settings", settings},
               {"warnings", c.warnings}};
  if (!c.model_file.is_null()) out["model_file"] = ojson::parse(c.model_file.dump());
  if (!c.conditions.is_null()) out["conditions"] = ojson::parse(c.conditions.dump());
  return out;
}

// Settings of a newer minor version may carry keys this reader does not know: they are ignored
// here (a result is a record), while settings given as input stay strict.
MeasureSettings settings_known_keys(const ojson& j) {
  const nlohmann::json known = MeasureSettings{};
  nlohmann::json filtered = nlohmann::json::object();
  for (const auto& [key, value] : j.items()) {
    if (known.contains(key)) filtered[key] = nlohmann::json::parse(value.dump());
  }
  auto settings = filtered.get<MeasureSettings>();
  // Before schema 1.7 every run had a fixed number of blocks, and min_blocks was not recorded.
  if (!j.contains("min_blocks")) settings.min_blocks = settings.blocks;
  // Before schema 1.8 every trial built its workload anew.
  if (!j.contains("keep_workloads")) settings.keep_workloads = false;
  return settings;
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

ojson profile_to_json(const ArmProfile& p) {
  ojson j = {{"trace_file", p.trace_file},
             {"steps", p.steps},
             {"top_cpu_ops", op_times_to_json(p.top_cpu_ops)},
             {"top_cuda_kernels", op_times_to_json(p.top_cuda_kernels)}};
  if (!p.error.empty()) j["error"] = p.error;
  return j;
}

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

std::optional<double> cpu_time_per_step_ms(const Trial& t) {
  if (t.step_cpu_times_ms.empty()) return std::nullopt;
  double total = 0;
  for (double ms : t.step_cpu_times_ms) total += ms;
  return total / static_cast<double>(t.step_cpu_times_ms.size());
}

ojson trial_to_json(const Trial& t) {
  ojson j = {{"block", t.block},
             {"position", t.position},
             {"warmup_steps", t.warmup_steps},
             {"warmup_stable", t.warmup_stable},
             {"reused_workload", t.reused_workload},
             {"samples_per_step", t.samples_per_step},
             {"throughput_samples_per_s", t.throughput_samples_per_s},
             {"memory", memory_to_json(t.memory)},
             {"metrics", t.metrics},
             {"step_times_ms", t.step_times_ms}};
  if (!t.step_cpu_times_ms.empty()) j["step_cpu_times_ms"] = t.step_cpu_times_ms;
  if (t.breakdown) j["breakdown"] = breakdown_to_json(*t.breakdown);
  return j;
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
  return t;
}

ojson to_json_document(const Result& r) {
  ojson j = {{"schema_version", r.schema_version}, {"context", context_to_json(r.context)}};
  j["suites"] = ojson::array();
  for (const auto& s : r.suites) {
    ojson suite = {
        {"name", s.name}, {"description", s.description}, {"isolation", s.isolation}, {"cases", ojson::array()}};
    if (s.source_claim)
      suite["source_claim"] = {{"sources", s.source_claim->sources}, {"claim", s.source_claim->claim}};
    if (s.chart) suite["chart"] = to_string(*s.chart);
    for (const auto& c : s.cases) suite["cases"].push_back(case_to_json(c));
    if (!s.notes.empty()) suite["notes"] = s.notes;
    j["suites"].push_back(std::move(suite));
  }
  return j;
}

nlohmann::ordered_json case_document(const CaseResult& c) { return case_to_json(c); }
CaseResult case_from_document(const nlohmann::ordered_json& j) { return case_from_json(j); }

namespace {

// Before 1.9 a significant change under the practical threshold was written
// no_significant_difference: its interval excludes 1, which is the rule of under_threshold.
void upgrade_verdicts_before_1_9(Result& r) {
  const SchemaVersion v = parse_schema_version(r.schema_version);
  if (v.major != 1 || !v.before(1, 9)) return;
  for (auto& suite : r.suites) {
    for (auto& c : suite.cases) {
      for (auto& cmp : c.comparisons) {
        const bool excludes_one = cmp.estimate.ci_low > 1 || cmp.estimate.ci_high < 1;
        if (cmp.verdict == stats::Verdict::no_significant_difference && excludes_one) {
          cmp.verdict = stats::Verdict::under_threshold;
        }
      }
    }
  }
}

}  // namespace

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

const SuiteResult* find_suite(const Result& result, std::string_view name) {
  for (const auto& s : result.suites) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ArmResult* find_arm(const CaseResult& c, std::string_view arm) {
  for (const auto& a : c.arms) {
    if (a.arm == arm) return &a;
  }
  return nullptr;
}

const Comparison* find_comparison(const CaseResult& c, std::string_view treatment, std::string_view metric) {
  for (const auto& k : c.comparisons) {
    if (k.treatment == treatment && k.metric == metric) return &k;
  }
  return nullptr;
}

Result parse_result_text(const std::string& text, const std::string& origin) {
  ojson document;
  try {
    document = ojson::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw InputError(fmt::format("{}: not valid JSON (truncated or corrupt?): {}", origin, e.what()));
  }
  return parse_result(document, origin);
}

void write_result_atomically(const Result& result, const std::string& path) {
  // A NaN would be written as null, a document no reader accepts: refused here, by name.
  write_file_atomically(path, checked_dump(to_json_document(result), 2, path) + "\n");
}

}  // namespace tipbench
