#include "tipbench/explain/profiled_steps.h"

#include "tipbench/common/checked_text.h"
#include "tipbench/explain/kernel_names.h"
#include "tipbench/common/json_number.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace tipbench {

namespace {

using ojson = nlohmann::ordered_json;
constexpr std::string_view kScopePrefix = "tipbench::";

constexpr std::array<std::pair<ProfiledKind, const char*>, 8> kKindNames{
    {{ProfiledKind::op, "op"},
     {ProfiledKind::kernel, "kernel"},
     {ProfiledKind::memcpy, "memcpy"},
     {ProfiledKind::memset, "memset"},
     {ProfiledKind::runtime, "runtime"},
     {ProfiledKind::gpu_annotation, "gpu_annotation"},
     {ProfiledKind::allocation, "allocation"},
     {ProfiledKind::other, "other"}}};

// Ops that only allocate for the op that called them: an allocation is charged to that caller.
bool allocates_for_caller(const std::string& name) {
  static const std::set<std::string> names{"aten::empty",      "aten::empty_like", "aten::empty_strided",
                                           "aten::new_empty",  "aten::resize_",    "aten::new_empty_strided",
                                           "aten::zeros_like", "aten::zero_",      "aten::fill_"};
  return names.contains(name);
}

// A cudaGraphLaunch (runtime) or cuGraphLaunch (driver) call: the kernels under it are a replay.
bool is_graph_launch(const ProfiledEvent& e) {
  return e.kind == ProfiledKind::runtime && e.name.find("GraphLaunch") != std::string::npos;
}

class Reducer {
 public:
  explicit Reducer(const ProfiledSteps& s) : s_(s), ev_(s.events), in_lead_in_(ev_.size(), -1) {
    children_.resize(ev_.size());
    for (std::size_t i = 0; i < ev_.size(); ++i) {
      if (const auto p = ev_[i].parent; p >= 0) children_[static_cast<std::size_t>(p)].push_back(i);
    }
  }

  StepBreakdown run() {
    StepBreakdown out;
    out.steps = std::max(1, s_.steps);
    out.step_ms = s_.wall_ms / out.steps;
    find_window();
    attribute_time(out);
    fill_memory(out);
    return out;
  }

 private:
  bool cuda() const { return s_.device_type == "cuda"; }
  bool is_op(std::size_t i) const { return ev_[i].kind == ProfiledKind::op; }
  bool is_scope(std::size_t i) const { return is_op(i) && ev_[i].name.starts_with(kScopePrefix); }
  bool on_device(const ProfiledEvent& e) const { return !cuda() || e.device < 0 || e.device == s_.device_index; }

  // The parent; a device event Kineto did not parent (no flow record) follows its correlated op.
  std::int64_t parent_of(std::size_t i) const {
    const auto& e = ev_[i];
    if (e.parent >= 0) return e.parent;
    return is_device_work(e.kind) ? e.linked : -1;
  }

  bool in_lead_in(std::size_t i) {
    if (in_lead_in_[i] >= 0) return in_lead_in_[i] == 1;
    bool found = false;
    std::vector<std::size_t> path;
    for (std::int64_t j = static_cast<std::int64_t>(i); j >= 0; j = parent_of(static_cast<std::size_t>(j))) {
      const auto u = static_cast<std::size_t>(j);
      if (in_lead_in_[u] >= 0) {
        found = in_lead_in_[u] == 1;
        break;
      }
      path.push_back(u);
      if (is_op(u) && ev_[u].name == kLeadInScope) {
        found = true;
        break;
      }
    }
    for (auto u : path) in_lead_in_[u] = found ? 1 : 0;
    return found;
  }

  // The attributed steps' span on the host: from the first tipbench::step to the end of the last.
  void find_window() {
    for (std::size_t i = 0; i < ev_.size(); ++i) {
      if (!is_op(i) || ev_[i].name != kStepScope) continue;
      window_start_ = window_start_ < 0 ? ev_[i].start_ns : std::min(window_start_, ev_[i].start_ns);
      window_end_ = std::max(window_end_, ev_[i].end_ns);
    }
  }

  // The phase around event i: the innermost tipbench scope, or "backward" under an autograd node.
  std::string phase_of(std::size_t i) const {
    for (std::int64_t j = static_cast<std::int64_t>(i); j >= 0; j = parent_of(static_cast<std::size_t>(j))) {
      const auto u = static_cast<std::size_t>(j);
      if (!is_op(u)) continue;
      const auto& name = ev_[u].name;
      if (name.starts_with(kScopePrefix)) return name.substr(kScopePrefix.size());
      if (name.starts_with("autograd::engine::evaluate_function")) return "backward";
    }
    return kStepPhase;
  }

  // The innermost ATen op at or above event i (no tipbench scope), kGraphReplay for device work a
  // graph launch replayed, or kOutsideOps.
  std::string op_of(std::size_t i, bool skip_allocators) const {
    for (std::int64_t j = static_cast<std::int64_t>(i); j >= 0; j = parent_of(static_cast<std::size_t>(j))) {
      const auto u = static_cast<std::size_t>(j);
      if (is_graph_launch(ev_[u])) return kGraphReplay;
      if (!is_op(u) || is_scope(u)) continue;
      if (skip_allocators && allocates_for_caller(ev_[u].name)) {
        const auto p = parent_of(u);
        if (p >= 0 && is_op(static_cast<std::size_t>(p)) && !is_scope(static_cast<std::size_t>(p))) continue;
      }
      return ev_[u].name;
    }
    return kOutsideOps;
  }

  // CPU self time: the event's duration less its direct child ops' on the same thread.
  double self_ns(std::size_t i) const {
    const auto& e = ev_[i];
    double ns = static_cast<double>(e.end_ns - e.start_ns);
    for (auto c : children_[i]) {
      if (is_op(c) && ev_[c].thread == e.thread) ns -= static_cast<double>(ev_[c].end_ns - ev_[c].start_ns);
    }
    return std::max(0.0, ns);
  }

  struct KeyTotals {
    double ns = 0;
    double calls = 0;
    std::map<std::string, std::pair<double, double>> kernels;  // name -> ns, calls
  };
  struct BusySpan {
    std::int64_t start = 0;
    std::int64_t end = 0;
    std::int64_t launched = -1;  // when the host called the launch (-1: unknown)
  };

  void attribute_time(StepBreakdown& out) {
    std::map<std::pair<std::string, std::string>, KeyTotals> keys;
    std::vector<BusySpan> spans;
    double device_events = 0;
    for (std::size_t i = 0; i < ev_.size(); ++i) {
      const auto& e = ev_[i];
      if (e.kind == ProfiledKind::op) {
        if (in_lead_in(i) || e.name == kLeadInScope) continue;
        if (is_scope(i)) {
          if (!cuda()) keys[{e.name.substr(kScopePrefix.size()), kOutsideOps}].ns += self_ns(i);
          continue;
        }
        auto& k = keys[{phase_of(i), e.name}];
        k.calls += 1;
        if (!cuda()) k.ns += self_ns(i);
        continue;
      }
      // Device work only: a GPU user annotation is a span Kineto draws over a scope's kernels,
      // not work of its own (PyTorch's key_averages skips it: profiler_util.py,
      // `not evt.is_user_annotation`; HTA drops it: parser_config.py, drop_gpu_user_annotation).
      if (!cuda() || !is_device_work(e.kind) || !on_device(e)) continue;
      BusySpan span{e.start_ns, e.end_ns, -1};
      // The launch is the runtime call, not the op (HTA breakdown_analysis.py: ts_runtime).
      if (e.parent >= 0 && ev_[static_cast<std::size_t>(e.parent)].kind == ProfiledKind::runtime)
        span.launched = ev_[static_cast<std::size_t>(e.parent)].start_ns;
      spans.push_back(span);
      if (in_lead_in(i)) continue;
      device_events += 1;
      auto& acc = keys[{phase_of(i), op_of(i, false)}];
      const auto ns = static_cast<double>(e.end_ns - e.start_ns);
      acc.ns += ns;
      auto& kernel = acc.kernels[e.kind == ProfiledKind::kernel ? normalised_kernel_name(e.name) : e.name];
      kernel.first += ns;
      kernel.second += 1;
    }
    const double per_step = 1.0 / out.steps;
    for (const auto& [key, acc] : keys) {
      if (acc.ns <= 0 && acc.calls <= 0) continue;
      BreakdownKey k{.phase = key.first,
                     .op = key.second,
                     .ms_per_step = acc.ns / 1e6 * per_step,
                     .calls_per_step = acc.calls * per_step};
      for (const auto& [name, kernel] : acc.kernels)
        k.kernels.push_back({name, kernel.first / 1e6 * per_step, kernel.second * per_step});
      std::stable_sort(k.kernels.begin(), k.kernels.end(),
                       [](const auto& a, const auto& b) { return a.ms_per_step > b.ms_per_step; });
      if (k.kernels.size() > kMaxBreakdownKeys) k.kernels.resize(kMaxBreakdownKeys);
      out.keys.push_back(std::move(k));
    }
    // The largest keys survive the cap, not the first in alphabetical order.
    std::stable_sort(out.keys.begin(), out.keys.end(), [](const BreakdownKey& a, const BreakdownKey& b) {
      return a.ms_per_step != b.ms_per_step ? a.ms_per_step > b.ms_per_step : a.calls_per_step > b.calls_per_step;
    });
    if (out.keys.size() > kMaxBreakdownKeys) out.keys.resize(kMaxBreakdownKeys);
    if (cuda() && window_start_ >= 0) {
      const auto [host, other] = idle_split(std::move(spans));
      out.gpu_idle_host_wait_ms = host / 1e6 * per_step;
      out.gpu_idle_other_ms = other / 1e6 * per_step;
      out.device_events_per_step = device_events * per_step;
    }
  }

  // The device's idle time inside the window, HTA's way (breakdown_analysis.py,
  // is_host_wait = ts_runtime > prev_end_ts): a gap before a device event launched after the
  // device went idle waited for the host; a gap before one launched earlier, or whose launch is
  // unknown (no runtime record), waited for something else. The tail after the last event, while
  // the host was still inside the step, waited for the host.
  std::pair<double, double> idle_split(std::vector<BusySpan> spans) const {
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    double host = 0, other = 0;
    std::int64_t busy_until = window_start_;
    for (const auto& s : spans) {
      if (s.start >= window_end_) break;
      if (s.start > busy_until) {
        const auto gap = static_cast<double>(s.start - busy_until);
        if (s.launched >= 0 && s.launched >= busy_until)
          host += gap;
        else
          other += gap;
      }
      busy_until = std::max(busy_until, s.end);
    }
    if (window_end_ > busy_until) host += static_cast<double>(window_end_ - busy_until);
    return {host, other};
  }

  struct Allocation {
    std::int64_t time = 0;
    std::int64_t ptr = 0;
    std::int64_t bytes = 0;
    std::int64_t total = 0;
    std::string phase;
    std::string op;
  };

  // The memory at the attributed steps' peak. CPU: the peak of what the steps allocated and still
  // held. CUDA: the caching allocator's largest total (its aggregate allocated_bytes, which the
  // allocator reports with every event), at least what was allocated when the steps began (a
  // graph replay allocates nothing), less what the case's other kept arms hold; the blocks the
  // steps allocated and held then by their ops, the rest live before the steps.
  void fill_memory(StepBreakdown& out) const {
    std::vector<Allocation> before, steps;
    for (std::size_t i = 0; i < ev_.size(); ++i) {
      const auto& e = ev_[i];
      if (e.kind != ProfiledKind::allocation || e.device_type != s_.device_type || !on_device(e)) continue;
      auto& into = window_start_ >= 0 && e.start_ns < window_start_ ? before : steps;
      into.push_back({e.start_ns, e.ptr, e.bytes, e.total_allocated, {}, {}});
      if (&into == &steps) {
        into.back().phase = phase_of(i);
        into.back().op = op_of(i, /*skip_allocators=*/true);
      }
    }
    const auto by_time = [](const auto& a, const auto& b) { return a.time < b.time; };
    std::stable_sort(before.begin(), before.end(), by_time);
    std::stable_sort(steps.begin(), steps.end(), by_time);
    out.memory_device = s_.device_type;
    std::int64_t held = 0, peak = 0;
    std::size_t peak_at = 0;
    std::int64_t total_peak = before.empty() ? s_.allocated_at_start : before.back().total;
    const bool by_total = cuda();
    std::map<std::int64_t, std::int64_t> live;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const auto& a = steps[i];
      if (a.bytes > 0) {
        live[a.ptr] = a.bytes;
        held += a.bytes;
      } else if (const auto it = live.find(a.ptr); it != live.end()) {
        held -= it->second;
        live.erase(it);
      }
      if (by_total ? a.total > total_peak : held > peak) {
        peak_at = i + 1;
        if (by_total) total_peak = a.total;
      }
      peak = std::max(peak, held);
    }
    std::map<std::int64_t, const Allocation*> at_peak;
    for (std::size_t i = 0; i < peak_at; ++i) {
      if (steps[i].bytes > 0)
        at_peak[steps[i].ptr] = &steps[i];
      else
        at_peak.erase(steps[i].ptr);
    }
    std::map<std::pair<std::string, std::string>, std::int64_t> by_op;
    std::int64_t own = 0;
    for (const auto& [ptr, a] : at_peak) {
      by_op[{a->phase, a->op}] += a->bytes;
      own += a->bytes;
    }
    out.peak_bytes = by_total ? std::max<std::int64_t>(0, total_peak - s_.held_by_others) : peak;
    if (by_total && out.peak_bytes > own) by_op[{kStepPhase, kLiveBefore}] = out.peak_bytes - own;
    for (const auto& [key, bytes] : by_op) out.peak.push_back({key.first, key.second, bytes});
    std::sort(out.peak.begin(), out.peak.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    if (out.peak.size() > 64) out.peak.resize(64);
  }

  const ProfiledSteps& s_;
  const std::vector<ProfiledEvent>& ev_;
  std::vector<std::vector<std::size_t>> children_;
  std::vector<signed char> in_lead_in_;
  std::int64_t window_start_ = -1;
  std::int64_t window_end_ = -1;
};

ProfiledKind kind_named(const std::string& name) {
  for (const auto& [kind, text] : kKindNames) {
    if (name == text) return kind;
  }
  throw std::invalid_argument("profiled events: unknown kind '" + name + "'");
}

// A file from elsewhere could link events in a circle, and every walk up the parents would then
// never end: refused where it is read.
void check_no_cycle(const std::vector<ProfiledEvent>& ev) {
  const auto up = [&](std::size_t i) {
    const auto& e = ev[i];
    return e.parent >= 0 ? e.parent : is_device_work(e.kind) ? e.linked : std::int64_t{-1};
  };
  std::vector<char> state(ev.size(), 0);  // 0 not seen, 1 on the current path, 2 leads to a root
  std::vector<std::size_t> path;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    path.clear();
    std::int64_t j = static_cast<std::int64_t>(i);
    while (j >= 0 && state[static_cast<std::size_t>(j)] == 0) {
      state[static_cast<std::size_t>(j)] = 1;
      path.push_back(static_cast<std::size_t>(j));
      j = up(static_cast<std::size_t>(j));
    }
    if (j >= 0 && state[static_cast<std::size_t>(j)] == 1)
      throw std::invalid_argument("profiled steps: events whose parents form a circle");
    for (auto u : path) state[u] = 2;
  }
}

template <typename T>
T optional_integer(const ojson& j, const char* key, T fallback) {
  return j.contains(key) ? json_integer<T>(j, key) : fallback;
}

}  // namespace

bool is_device_work(ProfiledKind k) {
  return k == ProfiledKind::kernel || k == ProfiledKind::memcpy || k == ProfiledKind::memset;
}

const char* profiled_kind_name(ProfiledKind kind) {
  for (const auto& [k, text] : kKindNames) {
    if (k == kind) return text;
  }
  return "other";
}

StepBreakdown reduce_profiled_steps(const ProfiledSteps& steps) { return Reducer(steps).run(); }

ojson profiled_steps_to_json(const ProfiledSteps& s) {
  ojson j = {{"format", "tipbench-profiled-steps"},
             {"version", 1},
             {"device_type", s.device_type},
             {"device_index", s.device_index},
             {"steps", s.steps},
             {"wall_ms", s.wall_ms},
             {"allocated_at_start", s.allocated_at_start},
             {"held_by_others", s.held_by_others},
             {"events", ojson::array()}};
  auto& events = j["events"];
  for (const auto& e : s.events) {
    ojson x = {{"kind", profiled_kind_name(e.kind)}, {"name", e.name}, {"start_ns", e.start_ns}, {"end_ns", e.end_ns}};
    if (e.thread != 0) x["thread"] = e.thread;
    if (e.parent >= 0) x["parent"] = e.parent;
    if (e.linked >= 0) x["linked"] = e.linked;
    if (e.device >= 0) x["device"] = e.device;
    if (e.stream >= 0) x["stream"] = e.stream;
    if (e.kind == ProfiledKind::allocation) {
      x["device_type"] = e.device_type;
      x["ptr"] = e.ptr;
      x["bytes"] = e.bytes;
      x["total_allocated"] = e.total_allocated;
    } else if ((e.kind == ProfiledKind::memcpy || e.kind == ProfiledKind::memset) && e.bytes > 0) {
      x["bytes"] = e.bytes;  // what the copy or memset moved (since counted work)
    }
    events.push_back(std::move(x));
  }
  return j;
}

ProfiledSteps profiled_steps_from_json(const ojson& j) {
  if (j.value("format", "") != "tipbench-profiled-steps")
    throw std::invalid_argument("not a tipbench profiled-steps file (no \"format\": \"tipbench-profiled-steps\")");
  if (json_integer<int>(j, "version") != 1) throw std::invalid_argument("profiled steps: unknown version");
  ProfiledSteps s;
  s.device_type = j.at("device_type").get<std::string>();
  if (s.device_type != "cpu" && s.device_type != "cuda")
    throw std::invalid_argument("profiled steps: device_type is neither cpu nor cuda");
  s.device_index = json_integer<int>(j, "device_index");
  s.steps = json_integer<int>(j, "steps");
  if (s.steps < 0) throw std::invalid_argument("profiled steps: steps is negative");
  s.wall_ms = j.at("wall_ms").get<double>();
  if (!(s.wall_ms >= 0)) throw std::invalid_argument("profiled steps: wall_ms is negative or not a number");
  s.allocated_at_start = json_integer<std::int64_t>(j, "allocated_at_start");
  s.held_by_others = json_integer<std::int64_t>(j, "held_by_others");
  const auto& events = j.at("events");
  if (!events.is_array() || events.size() > kMaxProfiledEvents)
    throw std::invalid_argument("profiled steps: events is not a list of at most " +
                                std::to_string(kMaxProfiledEvents));
  const auto count = static_cast<std::int64_t>(events.size());
  for (const auto& x : events) {
    ProfiledEvent e;
    e.kind = kind_named(x.at("kind").get<std::string>());
    e.name = x.at("name").get<std::string>();
    check_name("a profiled event's name", e.name);
    e.start_ns = json_integer<std::int64_t>(x, "start_ns");
    e.end_ns = json_integer<std::int64_t>(x, "end_ns");
    if (e.end_ns < e.start_ns) throw std::invalid_argument("profiled steps: an event ends before it starts");
    e.thread = optional_integer<std::uint64_t>(x, "thread", 0);
    e.parent = optional_integer<std::int64_t>(x, "parent", -1);
    e.linked = optional_integer<std::int64_t>(x, "linked", -1);
    if (e.parent < -1 || e.parent >= count || e.linked < -1 || e.linked >= count)
      throw std::invalid_argument("profiled steps: a parent or link outside the list");
    e.device = optional_integer<int>(x, "device", -1);
    e.stream = optional_integer<std::int64_t>(x, "stream", -1);
    if (e.kind == ProfiledKind::allocation) {
      e.device_type = x.at("device_type").get<std::string>();
      check_name("a profiled allocation's device_type", e.device_type);
      e.ptr = json_integer<std::int64_t>(x, "ptr");
      e.bytes = json_integer<std::int64_t>(x, "bytes");
      e.total_allocated = json_integer<std::int64_t>(x, "total_allocated");
    } else if (e.kind == ProfiledKind::memcpy || e.kind == ProfiledKind::memset) {
      e.bytes = optional_integer<std::int64_t>(x, "bytes", 0);
      if (e.bytes < 0) throw std::invalid_argument("profiled steps: a copy's bytes are negative");
    }
    s.events.push_back(std::move(e));
  }
  check_no_cycle(s.events);
  return s;
}

}  // namespace tipbench
