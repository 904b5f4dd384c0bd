#include "tipbench/gate/count_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace tipbench::gate {

namespace {

double sum_of(const std::vector<NamedCount>& names, bool bytes) {
  double sum = 0;
  for (const auto& n : names) sum += bytes ? n.bytes_per_step : n.per_step;
  return sum;
}

struct Metric {
  const char* name;
  std::optional<double> (*of)(const StepCounts&);
  const std::vector<NamedCount>* (*names)(const StepCounts&);  // what moved under it; nullptr none
};

constexpr const char* kInstructionsMetric = "instructions_per_step";

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> all{
      {"ops_per_step", [](const StepCounts& c) -> std::optional<double> { return c.ops_per_step; },
       [](const StepCounts& c) { return &c.ops; }},
      {"top_level_ops_per_step", [](const StepCounts& c) -> std::optional<double> { return c.top_level_ops_per_step; },
       [](const StepCounts& c) { return &c.ops; }},
      {"allocations_per_step", [](const StepCounts& c) -> std::optional<double> { return c.allocations_per_step; },
       nullptr},
      {"allocated_bytes_per_step",
       [](const StepCounts& c) -> std::optional<double> { return c.allocated_bytes_per_step; }, nullptr},
      {"kernels_per_step", [](const StepCounts& c) { return c.kernels_per_step; },
       [](const StepCounts& c) { return &c.kernels; }},
      {"copies_per_step",
       [](const StepCounts& c) -> std::optional<double> {
         if (!c.kernels_per_step) return std::nullopt;  // a CPU's counts hold no device events
         return sum_of(c.copies, false);
       },
       [](const StepCounts& c) { return &c.copies; }},
      {"copied_bytes_per_step",
       [](const StepCounts& c) -> std::optional<double> {
         if (!c.kernels_per_step) return std::nullopt;
         return sum_of(c.copies, true);
       },
       [](const StepCounts& c) { return &c.copies; }},
      {"memsets_per_step", [](const StepCounts& c) { return c.memsets_per_step; }, nullptr},
      {"syncs_per_step", [](const StepCounts& c) { return c.syncs_per_step; },
       [](const StepCounts& c) { return &c.syncs; }},
      {kInstructionsMetric, [](const StepCounts& c) { return c.instructions_per_step; }, nullptr},
  };
  return all;
}

const Metric* find_metric(std::string_view name) {
  for (const auto& m : metrics()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

std::string amount(double x) {
  return std::fabs(x - std::round(x)) < 1e-9 ? fmt::format("{:.0f}", x) : fmt::format("{:.2f}", x);
}

// The names whose counts differ, the largest change first: "aten::add_ 36 -> 50".
std::vector<std::string> moved_names(const std::vector<NamedCount>& before, const std::vector<NamedCount>& now) {
  std::map<std::string, std::pair<double, double>> both;
  for (const auto& n : before) both[n.name].first = n.per_step;
  for (const auto& n : now) both[n.name].second = n.per_step;
  std::vector<std::tuple<double, std::string, double, double>> changed;
  for (const auto& [name, v] : both) {
    if (std::fabs(v.first - v.second) > 1e-9)
      changed.emplace_back(std::fabs(v.second - v.first), name, v.first, v.second);
  }
  std::stable_sort(changed.begin(), changed.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  std::vector<std::string> out;
  for (const auto& [delta, name, a, b] : changed) {
    if (out.size() == 5) break;
    out.push_back(fmt::format("{} {} -> {}", name, amount(a), amount(b)));
  }
  return out;
}

struct ArmCounts {
  std::string suite;
  const StepCounts* counts;
};

// (case, arm) -> the arm's counts, for arms that ran.
std::map<std::pair<std::string, std::string>, ArmCounts> counts_by_arm(const Result& r) {
  std::map<std::pair<std::string, std::string>, ArmCounts> out;
  for (const auto& s : r.suites) {
    for (const auto& c : s.cases) {
      for (const auto& a : c.arms) {
        if (a.status != ArmStatus::ok) continue;
        out[{c.name, a.arm}] = {s.name, counts_of(a)};
      }
    }
  }
  return out;
}

constexpr const char* kSameWork = "its counted work is the same";

bool usable(const StepCounts* c) { return c != nullptr && c->error.empty() && c->steady; }

// Instructions are compared only as counted alike: perf_event and Callgrind count different
// things, and oneDNN's ISA cap picks which kernels run.
bool same_counter(const StepCounts& a, const StepCounts& b) {
  return a.instruction_counter == b.instruction_counter && a.instructions_onednn_isa == b.instructions_onednn_isa;
}

// The larger of the two runs' instruction spreads between counted steps (0 where not recorded):
// a difference inside it is the counter's own noise, so no tolerance is tighter than it.
double counter_spread(const StepCounts& baseline, const StepCounts& current) {
  return std::max(baseline.instructions_spread.value_or(0), current.instructions_spread.value_or(0));
}

}  // namespace

std::vector<std::string> count_metrics() {
  std::vector<std::string> out;
  for (const auto& m : metrics()) out.emplace_back(m.name);
  return out;
}

bool is_count_metric(const std::string& metric) { return find_metric(metric) != nullptr; }

std::optional<double> count_value(const StepCounts& counts, std::string_view metric) {
  const auto* m = find_metric(metric);
  return m ? m->of(counts) : std::nullopt;
}

std::string_view to_string(CountStatus status) {
  switch (status) {
    case CountStatus::equal: return "EQUAL";
    case CountStatus::within: return "WITHIN";
    case CountStatus::more: return "FAIL";
    case CountStatus::less: return "LESS";
  }
  return "?";
}

std::vector<CountCheck> compare_counts(const Result& baseline, const Result& current,
                                       const std::map<std::string, double>& tolerances,
                                       std::vector<std::string>& notes) {
  std::vector<CountCheck> out;
  if (tolerances.empty()) return out;
  const auto before = counts_by_arm(baseline);
  std::size_t no_baseline_counts = 0, unsteady = 0, compared = 0, other_counter = 0;
  for (const auto& [key, now] : counts_by_arm(current)) {
    const auto it = before.find(key);
    if (it == before.end() || !now.counts) continue;  // not in the baseline: the time checks say so
    if (!it->second.counts) {
      ++no_baseline_counts;
      continue;
    }
    if (!usable(now.counts) || !usable(it->second.counts)) {
      if (now.counts->error.empty() && it->second.counts->error.empty()) ++unsteady;
      continue;
    }
    ++compared;
    for (const auto& [metric, tolerance] : tolerances) {
      const auto* m = find_metric(metric);
      if (!m) continue;
      const auto a = m->of(*it->second.counts), b = m->of(*now.counts);
      if (!a || !b) continue;
      if (metric == kInstructionsMetric && !same_counter(*it->second.counts, *now.counts)) {
        ++other_counter;
        continue;
      }
      const double own_spread = metric == kInstructionsMetric ? counter_spread(*it->second.counts, *now.counts) : 0;
      CountCheck check{.suite = now.suite,
                       .case_name = key.first,
                       .arm = key.second,
                       .metric = metric,
                       .baseline = *a,
                       .current = *b,
                       .tolerance = std::max(tolerance, own_spread)};
      const double allowed = check.tolerance * *a + 1e-9;
      check.status = std::fabs(*b - *a) <= 1e-9      ? CountStatus::equal
                     : std::fabs(*b - *a) <= allowed ? CountStatus::within
                     : *b > *a                       ? CountStatus::more
                                                     : CountStatus::less;
      if (check.status != CountStatus::equal && m->names)
        check.moved = moved_names(*m->names(*it->second.counts), *m->names(*now.counts));
      check.detail =
          fmt::format("{} -> {} per step ({:+.1f}%{})", amount(*a), amount(*b), *a > 0 ? 100 * (*b - *a) / *a : 0.0,
                      tolerance > 0 ? fmt::format(", tolerance {:g}%", 100 * tolerance) : ", exact");
      if (own_spread > tolerance)
        check.detail.insert(
            check.detail.size() - 1,
            fmt::format(", widened to the counter's own spread between steps, {:.2g}%", 100 * own_spread));
      if (check.status == CountStatus::more) check.detail = "more work: " + check.detail;
      if (check.status == CountStatus::less) check.detail = "less work: " + check.detail;
      if (!check.moved.empty()) check.detail += fmt::format("; moved: {}", fmt::join(check.moved, ", "));
      out.push_back(std::move(check));
    }
  }
  if (compared > 0) notes.push_back(fmt::format("counted work compared for {} arm(s)", compared));
  if (no_baseline_counts > 0)
    notes.push_back(
        fmt::format("counted work of {} arm(s) not compared: the baseline counted none (a result before "
                    "schema 1.14, or --count-steps 0)",
                    no_baseline_counts));
  if (other_counter > 0)
    notes.push_back(fmt::format(
        "instructions of {} arm(s) not compared: the two runs counted them with different counters (perf_event, "
        "callgrind) or oneDNN ISA caps (ONEDNN_MAX_CPU_ISA)",
        other_counter));
  if (unsteady > 0)
    notes.push_back(fmt::format("counted work of {} arm(s) not compared: their counted steps did not agree", unsteady));
  std::stable_sort(out.begin(), out.end(),
                   [](const CountCheck& a, const CountCheck& b) { return a.fails() > b.fails(); });
  return out;
}

void judge_side_by_side(std::vector<CountCheck>& counts, std::vector<Check>& times) {
  std::map<std::pair<std::string, std::string>, bool> same_work;  // (case, arm) -> every count equal or within
  for (const auto& c : counts) {
    auto [it, fresh] = same_work.try_emplace({c.case_name, c.arm}, true);
    it->second = it->second && (c.status == CountStatus::equal || c.status == CountStatus::within);
  }
  for (auto& t : times) {
    const auto it = same_work.find({t.key.case_name, t.key.arm});
    if (it == same_work.end()) continue;
    for (auto& c : counts) {
      if (c.case_name == t.key.case_name && c.arm == t.key.arm && c.time_status.empty())
        c.time_status = std::string(to_string(t.status));
    }
    if (it->second && t.status == CheckStatus::regression && t.comparison &&
        t.detail.find(kSameWork) == std::string::npos) {
      t.detail += std::string("; ") + kSameWork + ": not more work by the code (the machine, memory or contention)";
    }
  }
  for (auto& c : counts) {
    if (c.fails() && !c.time_status.empty() && c.time_status != "FAIL" && c.detail.find("(time: ") == std::string::npos)
      c.detail += fmt::format(" (time: {}: the change did more work than the times resolve)", c.time_status);
  }
}

}  // namespace tipbench::gate
