#include "tipbench/statistics/settings.h"

#include "tipbench/common/json_number.h"

#include <stdexcept>
#include <string>

namespace tipbench {

MeasureSettings quick_settings() {
  MeasureSettings s;
  s.warmup_min_steps = 2;
  s.warmup_max_steps = 20;
  s.warmup_max_s = 5.0;
  s.warmup_window = 2;
  s.trial_min_steps = 5;
  s.trial_min_time_s = 0.15;  // 0.25 until 2026-11-29: the quick run over 150 s (docs/build-times.md)
  s.trial_max_steps = 200;
  s.min_blocks = s.blocks = 6;  // a fixed count: the quick run's time is known before it starts
  return s;
}

double noisy_cv_limit(const MeasureSettings& settings) { return settings.practical_threshold / 2; }

// One list of fields serves both directions, so the JSON keys and the struct never drift apart.
template <typename Visitor>
static void visit_fields(MeasureSettings& s, Visitor&& visit) {
  visit("warmup_min_steps", s.warmup_min_steps);
  visit("warmup_max_steps", s.warmup_max_steps);
  visit("warmup_max_s", s.warmup_max_s);
  visit("warmup_window", s.warmup_window);
  visit("warmup_tolerance", s.warmup_tolerance);
  visit("trial_min_steps", s.trial_min_steps);
  visit("trial_min_time_s", s.trial_min_time_s);
  visit("trial_max_steps", s.trial_max_steps);
  visit("keep_workloads", s.keep_workloads);
  visit("min_blocks", s.min_blocks);
  visit("blocks", s.blocks);
  visit("precision", s.precision);
  visit("time_budget_s", s.time_budget_s);
  visit("practical_threshold", s.practical_threshold);
  visit("bootstrap_resamples", s.bootstrap_resamples);
  visit("seed", s.seed);
  visit("inject_slowdown_pct", s.inject_slowdown_pct);
  visit("profile_dir", s.profile_dir);
  visit("profile_steps", s.profile_steps);
  visit("inject_slowdown_op", s.inject_slowdown_op);
  visit("explain_steps", s.explain_steps);
  visit("count_steps", s.count_steps);
  visit("instructions", s.instructions);
  visit("inject_extra_ops", s.inject_extra_ops);
}

void to_json(nlohmann::json& j, const MeasureSettings& s) {
  j = nlohmann::json::object();
  MeasureSettings copy = s;
  visit_fields(copy, [&](const char* key, const auto& field) { j[key] = field; });
}

void from_json(const nlohmann::json& j, MeasureSettings& s) {
  if (!j.is_object()) throw std::invalid_argument("settings must be a JSON object");
  nlohmann::json known = nlohmann::json::object();
  visit_fields(s, [&](const char* key, auto& field) {
    known[key] = true;
    if (j.contains(key)) json_get_to(j.at(key), field, key);
  });
  for (const auto& [key, value] : j.items()) {
    if (!known.contains(key)) throw std::invalid_argument("unknown settings key '" + key + "'");
  }
  if (s.instructions != "auto" && s.instructions != "callgrind" && s.instructions != "off")
    throw std::invalid_argument("settings: instructions is none of auto, callgrind, off");
  if (s.inject_extra_ops < 0) throw std::invalid_argument("settings: inject_extra_ops is negative");
}

}  // namespace tipbench
