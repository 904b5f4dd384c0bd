#include "tipbench/explain/profiled_counts.h"

#include "tipbench/explain/kernel_names.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

namespace tipbench {

namespace {

// Totals of one attributed step (indexed by its tipbench::step scope).
struct StepTotals {
  double ops = 0, allocations = 0, device_events = 0;
  bool operator==(const StepTotals&) const = default;
};

struct Tally {
  double calls = 0, bytes = 0;
};

std::vector<NamedCount> per_step(const std::map<std::string, Tally>& by_name, int steps) {
  std::vector<NamedCount> out;
  for (const auto& [name, t] : by_name) out.push_back({name, t.calls / steps, t.bytes / steps});
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.per_step > b.per_step; });
  return out;
}

double total(const std::map<std::string, Tally>& by_name, int steps) {
  double sum = 0;
  for (const auto& [name, t] : by_name) sum += t.calls;
  return sum / steps;
}

class Counter {
 public:
  explicit Counter(const ProfiledSteps& s) : s_(s), ev_(s.events), step_of_(ev_.size(), kUnknown) {}

  StepCounts run() {
    StepCounts out;
    out.steps = std::max(1, s_.steps);
    const bool cuda = s_.device_type == "cuda";
    std::map<std::string, Tally> ops, kernels, copies, syncs;
    double top_level = 0, allocations = 0, allocated_bytes = 0, memsets = 0;
    std::map<std::int64_t, StepTotals> per_step_totals;
    for (std::size_t i = 0; i < ev_.size(); ++i) {
      const auto& e = ev_[i];
      const std::int64_t step = step_of(i);
      if (step < 0) continue;
      auto& totals = per_step_totals[step];
      switch (e.kind) {
        case ProfiledKind::op:
          if (!is_dispatched_op(e.name)) break;
          ops[e.name].calls += 1;
          totals.ops += 1;
          if (!called_by_an_op(i)) top_level += 1;
          break;
        case ProfiledKind::allocation:
          if (e.bytes <= 0 || e.device_type != s_.device_type || !on_device(e)) break;
          allocations += 1;
          allocated_bytes += static_cast<double>(e.bytes);
          totals.allocations += 1;
          break;
        case ProfiledKind::kernel:
          if (!cuda || !on_device(e)) break;
          kernels[normalised_kernel_name(e.name)].calls += 1;
          totals.device_events += 1;
          break;
        case ProfiledKind::memcpy:
          if (!cuda || !on_device(e)) break;
          copies[copy_direction(e.name)].calls += 1;
          copies[copy_direction(e.name)].bytes += static_cast<double>(std::max<std::int64_t>(0, e.bytes));
          totals.device_events += 1;
          break;
        case ProfiledKind::memset:
          if (!cuda || !on_device(e)) break;
          memsets += 1;
          totals.device_events += 1;
          break;
        case ProfiledKind::runtime:
          if (cuda && is_host_sync(e.name)) syncs[e.name].calls += 1;
          break;
        default: break;
      }
    }
    const int n = out.steps;
    out.ops = per_step(ops, n);
    out.ops_per_step = total(ops, n);
    out.top_level_ops_per_step = top_level / n;
    out.allocations_per_step = allocations / n;
    out.allocated_bytes_per_step = allocated_bytes / n;
    if (cuda) {
      out.kernels = per_step(kernels, n);
      out.kernels_per_step = total(kernels, n);
      out.copies = per_step(copies, n);
      out.memsets_per_step = memsets / n;
      out.syncs = per_step(syncs, n);
      out.syncs_per_step = total(syncs, n);
    }
    // Steady: every attributed step counted alike (a step that recorded nothing counts too).
    std::vector<StepTotals> seen;
    for (const auto& [step, t] : per_step_totals) seen.push_back(t);
    while (static_cast<int>(seen.size()) < n) seen.push_back({});
    out.steady = std::all_of(seen.begin(), seen.end(), [&](const StepTotals& t) { return t == seen.front(); });
    return out;
  }

 private:
  static constexpr std::int64_t kUnknown = -2;  // not yet looked up; -1: in no attributed step

  bool on_device(const ProfiledEvent& e) const { return e.device < 0 || e.device == s_.device_index; }

  // The parent; a device event Kineto did not parent (no flow record) follows its correlated op
  // (as profiled_steps.cpp's reduction does).
  std::int64_t parent_of(std::size_t i) const {
    const auto& e = ev_[i];
    if (e.parent >= 0) return e.parent;
    return is_device_work(e.kind) ? e.linked : -1;
  }

  // The tipbench::step scope event i ran in (its index), or -1: the lead-in, or outside the steps.
  std::int64_t step_of(std::size_t i) {
    std::vector<std::size_t> path;
    std::int64_t found = -1;
    for (std::int64_t j = static_cast<std::int64_t>(i); j >= 0; j = parent_of(static_cast<std::size_t>(j))) {
      const auto u = static_cast<std::size_t>(j);
      if (step_of_[u] != kUnknown) {
        found = step_of_[u];
        break;
      }
      path.push_back(u);
      if (ev_[u].kind == ProfiledKind::op && ev_[u].name == kStepScope) {
        found = static_cast<std::int64_t>(u);
        break;
      }
      if (ev_[u].kind == ProfiledKind::op && ev_[u].name == kLeadInScope) break;
      if (path.size() > ev_.size()) break;  // a cycle (the fixture reader refuses them): none
    }
    for (auto u : path) step_of_[u] = found;
    return found;
  }

  // Whether a dispatched op runs inside another one (an ancestor that is a dispatched op).
  bool called_by_an_op(std::size_t i) const {
    for (std::int64_t j = parent_of(i); j >= 0; j = parent_of(static_cast<std::size_t>(j))) {
      const auto& p = ev_[static_cast<std::size_t>(j)];
      if (p.kind == ProfiledKind::op && is_dispatched_op(p.name)) return true;
    }
    return false;
  }

  const ProfiledSteps& s_;
  const std::vector<ProfiledEvent>& ev_;
  std::vector<std::int64_t> step_of_;
};

}  // namespace

bool is_dispatched_op(const std::string& name) {
  const auto sep = name.find("::");
  if (sep == std::string::npos || sep == 0 || name.find(' ') != std::string::npos) return false;
  return !name.starts_with("tipbench::") && !name.starts_with("autograd::");
}

bool is_host_sync(const std::string& name) {
  for (std::string_view sync : {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize"}) {
    if (name.starts_with(sync)) return true;
  }
  // cudaMemcpy (its CUPTI name may carry the API version: cudaMemcpy_v3020), not cudaMemcpyAsync.
  return name == "cudaMemcpy" || name.starts_with("cudaMemcpy_v");
}

std::string copy_direction(const std::string& name) {
  const auto paren = name.find(" (");
  std::string out = paren == std::string::npos ? name : name.substr(0, paren);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

StepCounts count_profiled_steps(const ProfiledSteps& steps) { return Counter(steps).run(); }

}  // namespace tipbench
