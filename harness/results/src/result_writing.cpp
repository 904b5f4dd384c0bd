// The result document written: each part to JSON in the schema's key order, and the file written
// atomically (a NaN or non-UTF-8 text refused by name: json_number.h).
#include "tipbench/results/result.h"

#include "tipbench/common/atomic_file.h"
#include "tipbench/common/json_number.h"

namespace tipbench {

using ojson = nlohmann::ordered_json;

namespace {

ojson op_times_to_json(const std::vector<OpTime>& ops) {
  ojson j = ojson::array();
  for (const auto& op : ops) {
    j.push_back({{"name", op.name}, {"self_ms_per_step", op.self_ms_per_step}, {"calls_per_step", op.calls_per_step}});
  }
  return j;
}

ojson levels_to_json(const Levels& levels) {
  ojson j = ojson::object();
  for (const auto& [k, v] : levels) j[k] = v;
  return j;
}

ojson summary_to_json(const stats::Summary& s) {
  return {{"median", s.median}, {"p10", s.p10}, {"p90", s.p90}, {"mean", s.mean}, {"cv", s.cv}, {"n", s.n}};
}

template <typename T>
void put_optional(ojson& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

ojson memory_to_json(const MemoryUse& m) {
  ojson j = ojson::object();
  put_optional(j, "peak_allocated_bytes", m.peak_allocated_bytes);
  put_optional(j, "peak_reserved_bytes", m.peak_reserved_bytes);
  put_optional(j, "timed_peak_allocated_bytes", m.timed_peak_allocated_bytes);
  put_optional(j, "peak_rss_growth_bytes", m.peak_rss_growth_bytes);
  return j;
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

}  // namespace

ojson profile_to_json(const ArmProfile& p) {
  ojson j = {{"trace_file", p.trace_file},
             {"steps", p.steps},
             {"top_cpu_ops", op_times_to_json(p.top_cpu_ops)},
             {"top_cuda_kernels", op_times_to_json(p.top_cuda_kernels)}};
  if (!p.error.empty()) j["error"] = p.error;
  return j;
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
  if (t.counts) j["counts"] = step_counts_to_json(*t.counts);
  return j;
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

void write_result_atomically(const Result& result, const std::string& path) {
  // A NaN would be written as null, a document no reader accepts: refused here, by name.
  write_file_atomically(path, checked_dump(to_json_document(result), 2, path) + "\n");
}

}  // namespace tipbench
