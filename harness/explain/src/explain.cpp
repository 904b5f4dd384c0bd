#include "tipbench/explain/explain.h"

#include "tipbench/statistics/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <utility>

namespace tipbench {

namespace {

using Key = std::pair<std::string, std::string>;  // phase, op

std::vector<std::pair<const StepBreakdown*, const StepBreakdown*>> pairs_by_block(const ArmResult& t,
                                                                                  const ArmResult& b) {
  std::map<int, const StepBreakdown*> base;
  for (const auto& trial : b.trials) {
    if (trial.breakdown && trial.breakdown->error.empty()) base[trial.block] = &*trial.breakdown;
  }
  std::vector<std::pair<const StepBreakdown*, const StepBreakdown*>> out;
  for (const auto& trial : t.trials) {
    if (!trial.breakdown || !trial.breakdown->error.empty()) continue;
    if (const auto it = base.find(trial.block); it != base.end()) out.emplace_back(&*trial.breakdown, it->second);
  }
  return out;
}

std::vector<const StepBreakdown*> profiled(const ArmResult& arm) {
  std::vector<const StepBreakdown*> out;
  for (const auto& trial : arm.trials) {
    if (trial.breakdown && trial.breakdown->error.empty()) out.push_back(&*trial.breakdown);
  }
  return out;
}

// The first reason a trial of either arm gives for having no breakdown (its steps ran in the
// Python worker, the profiler failed), or "".
std::string first_breakdown_error(const ArmResult& t, const ArmResult& b) {
  for (const auto* arm : {&t, &b}) {
    for (const auto& trial : arm->trials) {
      if (trial.breakdown && !trial.breakdown->error.empty()) return trial.breakdown->error;
    }
  }
  return "";
}

bool replays_a_graph(const std::vector<const StepBreakdown*>& side) {
  return std::any_of(side.begin(), side.end(), [](const StepBreakdown* x) {
    return std::any_of(x->keys.begin(), x->keys.end(), [](const BreakdownKey& k) { return k.op == kGraphReplay; });
  });
}

// The breakdown with its keys' device time summed into one (kAllDeviceTime), kernels kept.
StepBreakdown all_device_time(const StepBreakdown& x) {
  StepBreakdown out = x;
  BreakdownKey all{.phase = kStepPhase, .op = kAllDeviceTime};
  std::map<std::string, KernelTime> kernels;
  for (const auto& k : x.keys) {
    all.ms_per_step += k.ms_per_step;
    for (const auto& kernel : k.kernels) {
      auto& sum = kernels[kernel.name];
      sum.name = kernel.name;
      sum.ms_per_step += kernel.ms_per_step;
      sum.calls_per_step += kernel.calls_per_step;
    }
  }
  for (auto& [name, kernel] : kernels) all.kernels.push_back(std::move(kernel));
  out.keys = {std::move(all)};
  return out;
}

double mean(std::span<const double> xs) {
  double s = 0;
  for (double x : xs) s += x;
  return xs.empty() ? 0 : s / static_cast<double>(xs.size());
}

double variance(std::span<const double> xs) {
  if (xs.size() < 2) return 0;
  const double m = mean(xs);
  double s = 0;
  for (double x : xs) s += (x - m) * (x - m);
  return s / static_cast<double>(xs.size() - 1);
}

// The difference of means with a 95% t-interval, as the harness's comparison rule uses one:
// paired, over the per-pair differences; unpaired, Welch's (each side's own variance).
DeltaInterval delta_of(const std::vector<double>& t, const std::vector<double>& b, bool paired) {
  DeltaInterval d;
  d.delta = mean(t) - mean(b);
  double se = 0, df = 1;
  if (paired) {
    std::vector<double> diffs(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) diffs[i] = t[i] - b[i];
    se = std::sqrt(variance(diffs) / static_cast<double>(diffs.size()));
    df = static_cast<double>(diffs.size() - 1);
  } else {
    const double vt = variance(t) / static_cast<double>(t.size());
    const double vb = variance(b) / static_cast<double>(b.size());
    se = std::sqrt(vt + vb);
    const double denominator =
        vt * vt / static_cast<double>(t.size() - 1) + vb * vb / static_cast<double>(b.size() - 1);
    df = denominator > 0 ? (vt + vb) * (vt + vb) / denominator : static_cast<double>(t.size() + b.size() - 2);
  }
  const double half = se > 0 ? stats::t_quantile(std::max(1.0, df), 0.95) * se : 0;
  d.low = d.delta - half;
  d.high = d.delta + half;
  return d;
}

const BreakdownKey* find_key(const StepBreakdown& b, const Key& key) {
  for (const auto& k : b.keys) {
    if (k.phase == key.first && k.op == key.second) return &k;
  }
  return nullptr;
}

std::vector<double> values(const std::vector<const StepBreakdown*>& side, const auto& of) {
  std::vector<double> out;
  out.reserve(side.size());
  for (const auto* b : side) out.push_back(of(*b));
  return out;
}

std::set<std::string> kernels_of(const std::vector<const StepBreakdown*>& side, const Key& key) {
  std::set<std::string> names;
  for (const auto* b : side) {
    if (const auto* k = find_key(*b, key)) {
      for (const auto& kernel : k->kernels) {
        if (kernel.calls_per_step > 0) names.insert(kernel.name);
      }
    }
  }
  return names;
}

std::vector<std::string> minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

double median_of(std::vector<double> xs) { return xs.empty() ? 0 : stats::median(xs); }

void explain_memory(const std::vector<const StepBreakdown*>& t, const std::vector<const StepBreakdown*>& b,
                    std::size_t top, Explanation& e) {
  if (t.empty() || b.empty() || t.front()->memory_device.empty() || b.front()->memory_device.empty()) return;
  e.memory_device = t.front()->memory_device;
  e.treatment_peak_bytes = median_of(values(t, [](const StepBreakdown& x) { return double(x.peak_bytes); }));
  e.baseline_peak_bytes = median_of(values(b, [](const StepBreakdown& x) { return double(x.peak_bytes); }));
  std::set<Key> keys;
  for (const auto* side : {&t, &b}) {
    for (const auto* x : *side) {
      for (const auto& m : x->peak) keys.insert({m.phase, m.op});
    }
  }
  auto bytes = [](const std::vector<const StepBreakdown*>& side, const Key& key) {
    return median_of(values(side, [&](const StepBreakdown& x) {
      double sum = 0;
      for (const auto& m : x.peak) {
        if (m.phase == key.first && m.op == key.second) sum += static_cast<double>(m.bytes);
      }
      return sum;
    }));
  };
  for (const auto& key : keys) {
    const double bt = bytes(t, key), bb = bytes(b, key);
    if (bt != bb) e.memory.push_back({key.first, key.second, bt - bb, bb});
  }
  std::sort(e.memory.begin(), e.memory.end(), [](const MemoryCause& x, const MemoryCause& y) {
    return std::abs(x.delta_bytes) > std::abs(y.delta_bytes);
  });
  if (e.memory.size() > top) e.memory.resize(top);
}

std::string ms(double x) {
  const double a = std::abs(x);
  return a >= 10 ? fmt::format("{:.1f}", x) : a >= 1 ? fmt::format("{:.2f}", x) : fmt::format("{:.3f}", x);
}
std::string signed_ms(double x) { return (x >= 0 ? "+" : "") + ms(x); }

std::string interval_words(const DeltaInterval& d) {
  return fmt::format("{} ms/step [{}, {}]", signed_ms(d.delta), ms(d.low), ms(d.high));
}

std::string bytes_words(double bytes) {
  const double a = std::abs(bytes);
  if (a >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (a >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

std::string calls_words(double c) { return c == std::round(c) ? fmt::format("{:.0f}", c) : fmt::format("{:.1f}", c); }

std::string kernel_change(const Cause& c) {
  if (c.new_kernels.size() == 1 && c.vanished_kernels.size() == 1)
    return fmt::format("kernel {} replaced by {}", c.vanished_kernels.front(), c.new_kernels.front());
  std::vector<std::string> parts;
  if (!c.new_kernels.empty()) parts.push_back(fmt::format("new kernels: {}", fmt::join(c.new_kernels, ", ")));
  if (!c.vanished_kernels.empty())
    parts.push_back(fmt::format("vanished kernels: {}", fmt::join(c.vanished_kernels, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string cause_line(const Cause& c) {
  std::string line = fmt::format("{}  {}  {} of {}", c.phase, c.op, interval_words(c.ms_per_step), ms(c.baseline_ms));
  if (c.is_new()) {
    line += fmt::format("  new op, {} calls/step", calls_words(c.treatment_calls));
  } else if (c.vanished()) {
    line += fmt::format("  vanished op, {} calls/step before", calls_words(c.baseline_calls));
  } else if (std::abs(c.treatment_calls - c.baseline_calls) >= 0.5) {
    line += fmt::format("  calls {} -> {}", calls_words(c.baseline_calls), calls_words(c.treatment_calls));
  }
  if (const auto kernels = kernel_change(c); !kernels.empty()) line += "  (" + kernels + ")";
  return line;
}

// The step's delta the causes are a share of: the timed one when resolved, else the profiled one.
const DeltaInterval* step_delta(const Explanation& e) {
  if (e.timed_step_ms && e.timed_step_ms->resolved()) return &*e.timed_step_ms;
  if (e.step_ms.resolved()) return &e.step_ms;
  return nullptr;
}

double explained_share(const Explanation& e, std::size_t listed) {
  const auto* step = step_delta(e);
  if (!step || step->delta == 0) return 0;
  double sum = 0;
  for (std::size_t i = 0; i < std::min(listed, e.causes.size()); ++i) {
    const auto& d = e.causes[i].ms_per_step;
    if (d.resolved() && (d.delta > 0) == (step->delta > 0)) sum += d.delta;
  }
  return sum / step->delta;
}

double mean_step_ms(const Trial& t) {
  double sum = 0;
  for (double ms : t.step_times_ms) sum += ms;
  return t.step_times_ms.empty() ? 0 : sum / static_cast<double>(t.step_times_ms.size());
}

// The timed steps' difference over the trials that recorded breakdowns (the same pairs).
void explain_timed_steps(const ArmResult& treatment, const ArmResult& baseline, const ExplainOptions& options,
                         Explanation& e) {
  std::vector<double> t, b;
  if (options.paired) {
    std::map<int, double> base;
    for (const auto& trial : baseline.trials) {
      if (trial.breakdown && !trial.step_times_ms.empty()) base[trial.block] = mean_step_ms(trial);
    }
    for (const auto& trial : treatment.trials) {
      const auto it = base.find(trial.block);
      if (!trial.breakdown || trial.step_times_ms.empty() || it == base.end()) continue;
      t.push_back(mean_step_ms(trial));
      b.push_back(it->second);
    }
  } else {
    for (const auto& trial : treatment.trials) {
      if (trial.breakdown && !trial.step_times_ms.empty()) t.push_back(mean_step_ms(trial));
    }
    for (const auto& trial : baseline.trials) {
      if (trial.breakdown && !trial.step_times_ms.empty()) b.push_back(mean_step_ms(trial));
    }
  }
  if (t.size() < 2 || b.size() < 2) return;
  e.timed_step_ms = delta_of(t, b, options.paired);
  e.baseline_timed_step_ms = mean(b);
}

nlohmann::ordered_json interval_json(const DeltaInterval& d) {
  return {{"delta", d.delta}, {"low", d.low}, {"high", d.high}};
}

}  // namespace

Explanation explain_arms(const ArmResult& treatment, const ArmResult& baseline, const ExplainOptions& options) {
  Explanation e;
  e.paired = options.paired;
  std::vector<const StepBreakdown*> t, b;
  if (options.paired) {
    for (const auto& [x, y] : pairs_by_block(treatment, baseline)) {
      t.push_back(x);
      b.push_back(y);
    }
  } else {
    t = profiled(treatment);
    b = profiled(baseline);
  }
  if (t.size() < 2 || b.size() < 2) {
    const bool any = !profiled(treatment).empty() && !profiled(baseline).empty();
    const std::string error = first_breakdown_error(treatment, baseline);
    e.missing = any             ? fmt::format("{} profiled {} (2 needed)", std::min(t.size(), b.size()),
                                  options.paired ? "pairs of blocks" : "trials a side")
                : error.empty() ? "no step breakdowns recorded (run with --explain)"
                                : "no step breakdowns: " + error;
    return e;
  }
  // A graph replay has no ops: against an arm that has, each side's device time is one key.
  std::vector<StepBreakdown> collapsed;
  if (replays_a_graph(t) != replays_a_graph(b)) {
    e.note =
        "one arm replays a CUDA graph, whose kernels run under no op: the device time is compared as a whole; its "
        "memory is a private pool the allocator's totals do not show, so the peaks are not compared";
    collapsed.reserve(t.size() + b.size());
    for (auto* side : {&t, &b}) {
      for (auto& x : *side) x = &collapsed.emplace_back(all_device_time(*x));
    }
  }
  explain_timed_steps(treatment, baseline, options, e);
  e.pairs = std::min(t.size(), b.size());
  e.steps_per_trial = t.front()->steps;
  const auto step = [](const StepBreakdown& x) { return x.step_ms; };
  e.baseline_step_ms = mean(values(b, step));
  e.step_ms = delta_of(values(t, step), values(b, step), options.paired);

  std::set<Key> keys;
  for (const auto* side : {&t, &b}) {
    for (const auto* x : *side) {
      for (const auto& k : x->keys) keys.insert({k.phase, k.op});
    }
  }
  std::vector<Cause> all;
  // The device's idle time, as two keys of phase "step": on a GPU a launch-bound step's time goes
  // there, not into any op's kernels.
  const auto has_idle = [](const std::vector<const StepBreakdown*>& side) {
    return std::all_of(side.begin(), side.end(),
                       [](const StepBreakdown* x) { return x->gpu_idle_host_wait_ms.has_value(); });
  };
  if (has_idle(t) && has_idle(b)) {
    const auto host = [](const StepBreakdown& x) { return x.gpu_idle_host_wait_ms.value_or(0); };
    const auto other = [](const StepBreakdown& x) { return x.gpu_idle_other_ms.value_or(0); };
    e.gpu_idle_host_wait_ms = delta_of(values(t, host), values(b, host), options.paired);
    e.gpu_idle_other_ms = delta_of(values(t, other), values(b, other), options.paired);
    all.push_back({.phase = kStepPhase,
                   .op = kIdleHostWait,
                   .ms_per_step = *e.gpu_idle_host_wait_ms,
                   .baseline_ms = mean(values(b, host))});
    all.push_back({.phase = kStepPhase,
                   .op = kIdleOther,
                   .ms_per_step = *e.gpu_idle_other_ms,
                   .baseline_ms = mean(values(b, other))});
  }
  for (const auto& key : keys) {
    const auto time = [&](const StepBreakdown& x) {
      const auto* k = find_key(x, key);
      return k ? k->ms_per_step : 0.0;
    };
    const auto calls = [&](const StepBreakdown& x) {
      const auto* k = find_key(x, key);
      return k ? k->calls_per_step : 0.0;
    };
    Cause c{.phase = key.first, .op = key.second};
    const auto bt = values(b, time);
    c.ms_per_step = delta_of(values(t, time), bt, options.paired);
    c.baseline_ms = mean(bt);
    c.baseline_calls = mean(values(b, calls));
    c.treatment_calls = mean(values(t, calls));
    const auto kt = kernels_of(t, key), kb = kernels_of(b, key);
    c.new_kernels = minus(kt, kb);
    c.vanished_kernels = minus(kb, kt);
    all.push_back(std::move(c));
  }
  // Resolved keys that matter first (a resolved microsecond is no cause of a millisecond), then
  // the rest, each by |delta|.
  const double step_change = e.timed_step_ms ? e.timed_step_ms->delta : e.step_ms.delta;
  const double material = std::max(kMaterialShare * std::abs(step_change), 1e-3 * e.baseline_step_ms);
  const auto first = [&](const Cause& c) {
    return c.ms_per_step.resolved() && std::abs(c.ms_per_step.delta) >= material;
  };
  std::stable_sort(all.begin(), all.end(), [&](const Cause& x, const Cause& y) {
    if (first(x) != first(y)) return first(x);
    return std::abs(x.ms_per_step.delta) > std::abs(y.ms_per_step.delta);
  });
  const std::size_t listed = std::min(options.top, all.size());
  e.causes.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(listed));
  e.explained_share = explained_share(e, listed);
  e.unexplained = e.explained_share < kExplainedShareFloor;
  for (std::size_t i = listed; i < all.size() && e.count_changes.size() < options.top; ++i) {
    const auto& c = all[i];
    if (std::abs(c.treatment_calls - c.baseline_calls) >= 0.5 || !c.new_kernels.empty() || !c.vanished_kernels.empty())
      e.count_changes.push_back(c);
  }
  if (collapsed.empty()) explain_memory(t, b, options.top, e);
  return e;
}

std::vector<std::string> explanation_lines(const Explanation& e, std::size_t top) {
  if (!e.missing.empty()) return {"not explained: " + e.missing};
  std::vector<std::string> lines;
  if (!e.note.empty()) lines.push_back("note: " + e.note);
  const std::size_t listed = std::min(top, e.causes.size());
  std::string head;
  if (e.timed_step_ms) {
    head = fmt::format("step {} of {} ms timed; ", interval_words(*e.timed_step_ms), ms(e.baseline_timed_step_ms));
  }
  head += fmt::format("profiled {} of {} ms, over {} {} of {} steps", interval_words(e.step_ms), ms(e.baseline_step_ms),
                      e.pairs, e.paired ? "pairs" : "trials a side", e.steps_per_trial);
  const double share = explained_share(e, listed);
  const auto* step = step_delta(e);
  const char* which = step == &e.step_ms ? "profiled" : "timed";
  if (!step) {
    head += "; no step difference resolved: unexplained, the keys below moved most";
  } else if (share < kExplainedShareFloor) {
    head +=
        fmt::format("; unexplained: the resolved keys below account for {:.0f}% of the {} difference (under {:.0f}%)",
                    100 * share, which, 100 * kExplainedShareFloor);
  } else {
    head += fmt::format("; the resolved keys below explain {:.0f}% of the {} difference", 100 * share, which);
  }
  lines.push_back(std::move(head));
  for (std::size_t i = 0; i < listed; ++i) lines.push_back(cause_line(e.causes[i]));
  for (const auto& c : e.count_changes) lines.push_back("count: " + cause_line(c));
  if (e.gpu_idle_host_wait_ms) {
    lines.push_back(fmt::format("gpu idle: waiting for the host {}; other {}", interval_words(*e.gpu_idle_host_wait_ms),
                                interval_words(*e.gpu_idle_other_ms)));
  }
  if (!e.memory_device.empty()) {
    lines.push_back(fmt::format("memory ({} allocator peak in the profiled steps): {} -> {} ({}{})", e.memory_device,
                                bytes_words(e.baseline_peak_bytes), bytes_words(e.treatment_peak_bytes),
                                e.treatment_peak_bytes >= e.baseline_peak_bytes ? "+" : "",
                                bytes_words(e.treatment_peak_bytes - e.baseline_peak_bytes)));
    for (std::size_t i = 0; i < std::min(top, e.memory.size()); ++i) {
      const auto& m = e.memory[i];
      lines.push_back(fmt::format("memory: {}  {}  {}{} live at the peak (of {})", m.phase, m.op,
                                  m.delta_bytes >= 0 ? "+" : "", bytes_words(m.delta_bytes),
                                  bytes_words(m.baseline_bytes)));
    }
  }
  return lines;
}

std::string explanation_headline(const Explanation& e) {
  if (!e.missing.empty()) return "not explained: " + e.missing;
  if (e.causes.empty()) return "no profiled keys";
  const auto& top = e.causes.front();
  const auto* step = step_delta(e);
  if (!step)
    return fmt::format("{} {} {} (unexplained: no step difference resolved)", top.phase, top.op,
                       interval_words(top.ms_per_step));
  return fmt::format("{} {} {} ({} {:.0f}% of the step's {} ms)", top.phase, top.op, interval_words(top.ms_per_step),
                     e.unexplained ? "unexplained: the causes account for" : "explains", 100 * e.explained_share,
                     signed_ms(step->delta));
}

nlohmann::ordered_json explanation_to_json(const Explanation& e) {
  using ojson = nlohmann::ordered_json;
  if (!e.missing.empty()) return {{"missing", e.missing}};
  ojson j = {{"pairs", e.pairs},
             {"paired", e.paired},
             {"steps_per_trial", e.steps_per_trial},
             {"baseline_step_ms", e.baseline_step_ms},
             {"step_ms", interval_json(e.step_ms)},
             {"baseline_timed_step_ms", e.baseline_timed_step_ms},
             {"timed_step_ms", e.timed_step_ms ? interval_json(*e.timed_step_ms) : ojson()},
             {"explained_share", e.explained_share},
             {"unexplained", e.unexplained},
             {"causes", ojson::array()},
             {"count_changes", ojson::array()}};
  for (const auto* list : {&e.causes, &e.count_changes}) {
    auto& out = j[list == &e.causes ? "causes" : "count_changes"];
    for (const auto& c : *list) {
      out.push_back({{"phase", c.phase},
                     {"op", c.op},
                     {"ms_per_step", interval_json(c.ms_per_step)},
                     {"baseline_ms", c.baseline_ms},
                     {"baseline_calls", c.baseline_calls},
                     {"treatment_calls", c.treatment_calls},
                     {"new_kernels", c.new_kernels},
                     {"vanished_kernels", c.vanished_kernels}});
    }
  }
  if (!e.note.empty()) j["note"] = e.note;
  if (e.gpu_idle_host_wait_ms) {
    j["gpu_idle"] = {{"host_wait_ms", interval_json(*e.gpu_idle_host_wait_ms)},
                     {"other_ms", interval_json(*e.gpu_idle_other_ms)}};
  }
  if (!e.memory_device.empty()) {
    ojson memory = {{"device", e.memory_device},
                    {"baseline_peak_bytes", e.baseline_peak_bytes},
                    {"treatment_peak_bytes", e.treatment_peak_bytes},
                    {"contributors", ojson::array()}};
    for (const auto& m : e.memory)
      memory["contributors"].push_back(
          {{"phase", m.phase}, {"op", m.op}, {"delta_bytes", m.delta_bytes}, {"baseline_bytes", m.baseline_bytes}});
    j["memory"] = std::move(memory);
  }
  return j;
}

}  // namespace tipbench
