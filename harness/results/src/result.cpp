// The result document's own helpers: its schema version, an arm's status as text, and finding a
// suite, arm or comparison in it (reading: result_reading.cpp; writing: result_writing.cpp).
#include "tipbench/results/result.h"

#include <fmt/format.h>

namespace tipbench {

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

std::optional<double> cpu_time_per_step_ms(const Trial& t) {
  if (t.step_cpu_times_ms.empty()) return std::nullopt;
  double total = 0;
  for (double ms : t.step_cpu_times_ms) total += ms;
  return total / static_cast<double>(t.step_cpu_times_ms.size());
}

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

const StepCounts* counts_of(const ArmResult& arm) {
  for (const auto& t : arm.trials) {
    if (t.counts) return &*t.counts;
  }
  return nullptr;
}

}  // namespace tipbench
