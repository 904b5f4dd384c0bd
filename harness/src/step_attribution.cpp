#include "step_attribution.h"

#include "kineto_session.h"
#include "tipbench/error_text.h"
#include "tipbench/explain.h"

#include <ATen/record_function.h>
#include <c10/util/Logging.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/collection.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace tipbench::detail {

namespace {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::EventType;
using torch::profiler::impl::ExtraFields;
using Event = torch::profiler::impl::Result;
using EventPtr = std::shared_ptr<Event>;

constexpr std::string_view kScopePrefix = "tipbench::";

// The CPU allocator logs a warning, once, of a block it frees that was allocated before the
// profiler started (every tensor the steps free from the warm-up): expected here, so the log
// level is raised to errors while the steps run, and put back.
class QuietAllocatorWarnings {
 public:
  QuietAllocatorWarnings() : saved_(::FLAGS_caffe2_log_level) { ::FLAGS_caffe2_log_level = std::max(saved_, 2); }
  ~QuietAllocatorWarnings() { ::FLAGS_caffe2_log_level = saved_; }
  QuietAllocatorWarnings(const QuietAllocatorWarnings&) = delete;
  QuietAllocatorWarnings& operator=(const QuietAllocatorWarnings&) = delete;

 private:
  int saved_;
};

bool is_op(const Event& e) { return e.tag() == EventType::TorchOp; }
bool is_scope(const Event& e) { return is_op(e) && e.name().starts_with(kScopePrefix); }

// Ops that only allocate for the op that called them: an allocation is charged to that caller.
bool allocates_for_caller(const std::string& name) {
  static const std::set<std::string> names{"aten::empty",      "aten::empty_like", "aten::empty_strided",
                                           "aten::new_empty",  "aten::resize_",    "aten::new_empty_strided",
                                           "aten::zeros_like", "aten::zero_",      "aten::fill_"};
  return names.contains(name);
}

// Checked by reading against torch/csrc/profiler/collection.cpp (2.11): build_tree nests CPU ranges
// per thread by time; TransferEvents::setParents gives a device event (a kernel, a memcpy) its
// launching runtime call as parent (the flow link, `linked_activity_`), and that call sits under
// the op that launched it. getRecords returns every event, not only the roots.
EventPtr parent_of(const Event& e) {
  if (auto p = e.parent_.lock()) return p;
  if (e.tag() == EventType::Kineto) {
    // A device event whose launching runtime call was not made its parent: follow the link.
    const auto* fields = std::get_if<ExtraFields<EventType::Kineto>>(&e.extra_fields_);
    if (fields) {
      if (auto linked = fields->linked_activity_.lock()) return linked;
    }
  }
  return nullptr;
}

// The innermost ATen op at or above `e` (a tipbench scope is no op), or nullptr.
EventPtr op_above(EventPtr e, bool skip_allocators) {
  for (; e; e = parent_of(*e)) {
    if (!is_op(*e) || is_scope(*e)) continue;
    if (skip_allocators && allocates_for_caller(e->name())) {
      if (auto p = parent_of(*e); p && is_op(*p) && !is_scope(*p)) continue;
    }
    return e;
  }
  return nullptr;
}

// The phase around `e`: the innermost tipbench scope, or "backward" under an autograd node on the
// way to it (the engine's thread on a GPU has no scope at all).
std::string phase_of(EventPtr e) {
  for (; e; e = parent_of(*e)) {
    if (!is_op(*e)) continue;
    const std::string name = e->name();
    if (name.starts_with(kScopePrefix)) return name.substr(kScopePrefix.size());
    if (name.starts_with("autograd::engine::evaluate_function")) return "backward";
  }
  return kStepPhase;
}

struct KeyTotals {
  double ns = 0;
  double calls = 0;
  std::map<std::string, std::pair<double, double>> kernels;  // name -> ns, calls
};

struct BusySpan {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t launched = -1;  // when the host launched it (-1: unknown)
};

struct AllocationSeen {
  std::int64_t time = 0;
  std::intptr_t ptr = 0;
  std::int64_t bytes = 0;  // negative: a free
  std::int64_t total = 0;  // the allocator's total after it
  std::string phase;
  std::string op;
};

void all_events(const std::vector<EventPtr>& roots, std::vector<EventPtr>& out) {
  std::unordered_set<const Event*> seen;
  std::vector<EventPtr> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    auto e = std::move(stack.back());
    stack.pop_back();
    if (!e || !seen.insert(e.get()).second) continue;
    for (const auto& child : e->children_) stack.push_back(child);
    out.push_back(std::move(e));
  }
}

// Self time: the op's duration less its direct child ops' (CPU).
double self_ns(const Event& e) {
  double ns = static_cast<double>(e.endTimeNS() - e.start_time_ns_);
  for (const auto& child : e.children_) {
    if (is_op(*child) && child->start_tid_ == e.start_tid_)
      ns -= static_cast<double>(child->endTimeNS() - child->start_time_ns_);
  }
  return std::max(0.0, ns);
}

// The device's idle time between its busy spans, split by whether the next kernel was launched
// after the device went idle (it waited for the host) or before (it waited for something else:
// a dependency, a copy, an event). Holistic Trace Analysis splits idle time the same way
// ("host wait" against the rest, hta/analyzers/breakdown_analysis.py); the gap after the last
// kernel, until the final synchronize, is "other".
std::pair<double, double> idle_split(std::vector<BusySpan> spans, std::int64_t window_start, std::int64_t window_end) {
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  double host = 0, other = 0;
  std::int64_t busy_until = window_start;
  for (const auto& s : spans) {
    if (s.start > busy_until) {
      const double gap = static_cast<double>(s.start - busy_until);
      if (s.launched < 0 || s.launched >= busy_until)
        host += gap;
      else
        other += gap;
    }
    busy_until = std::max(busy_until, s.end);
  }
  if (window_end > busy_until) other += static_cast<double>(window_end - busy_until);  // the final sync
  return {host, other};
}

void fill_memory(std::vector<AllocationSeen> allocations, const c10::Device& device, StepBreakdown& out) {
  std::sort(allocations.begin(), allocations.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  // The peak of what the steps allocated and still held, found first; then what was live at it.
  std::map<std::intptr_t, std::int64_t> live;
  std::int64_t held = 0, peak = 0;
  std::size_t peak_at = 0;
  for (std::size_t i = 0; i < allocations.size(); ++i) {
    const auto& a = allocations[i];
    if (a.bytes > 0) {
      live[a.ptr] = a.bytes;
      held += a.bytes;
    } else if (const auto it = live.find(a.ptr); it != live.end()) {
      held -= it->second;
      live.erase(it);
    }
    if (held > peak) {
      peak = held;
      peak_at = i + 1;
    }
  }
  std::map<std::intptr_t, const AllocationSeen*> at_peak;
  for (std::size_t i = 0; i < peak_at; ++i) {
    const auto& a = allocations[i];
    if (a.bytes > 0)
      at_peak[a.ptr] = &a;
    else
      at_peak.erase(a.ptr);
  }
  std::map<std::pair<std::string, std::string>, std::int64_t> by_op;
  for (const auto& [ptr, a] : at_peak) by_op[{a->phase, a->op}] += a->bytes;
  out.memory_device = device.is_cuda() ? "cuda" : "cpu";
  out.peak_bytes = peak;
  if (device.is_cuda() && peak_at > 0) {
    // The caching allocator's total holds what was live before the steps too.
    out.peak_bytes = std::max(peak, allocations[peak_at - 1].total);
    if (out.peak_bytes > peak) by_op[{kStepPhase, kLiveBefore}] = out.peak_bytes - peak;
  }
  for (const auto& [key, bytes] : by_op) out.peak.push_back({key.first, key.second, bytes});
  std::sort(out.peak.begin(), out.peak.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  if (out.peak.size() > 64) out.peak.resize(64);
}

void reduce(const kineto::ProfilerResult& result, const c10::Device& device, int steps, StepBreakdown& out) {
  std::vector<EventPtr> events;
  all_events(result.event_tree(), events);
  std::map<std::pair<std::string, std::string>, KeyTotals> keys;
  std::vector<BusySpan> spans;
  std::vector<AllocationSeen> allocations;
  std::int64_t window_start = -1, window_end = -1;
  const auto key_of = [&](const EventPtr& e, bool skip_allocators) {
    const auto op = op_above(e, skip_allocators);
    return std::make_pair(phase_of(e), op ? op->name() : std::string(kOutsideOps));
  };
  for (const auto& e : events) {
    if (is_op(*e)) {
      const std::string name = e->name();
      if (name == "tipbench::step") {
        window_start = window_start < 0 ? e->start_time_ns_ : std::min(window_start, e->start_time_ns_);
        window_end = std::max(window_end, e->endTimeNS());
      }
      if (is_scope(*e)) {
        if (!device.is_cuda()) keys[{name.substr(kScopePrefix.size()), kOutsideOps}].ns += self_ns(*e);
        continue;
      }
      auto& k = keys[{phase_of(e), name}];
      k.calls += 1;
      if (!device.is_cuda()) k.ns += self_ns(*e);
      continue;
    }
    if (const auto* a = std::get_if<ExtraFields<EventType::Allocation>>(&e->extra_fields_)) {
      if (a->device_type_ != device.type()) continue;
      const auto [phase, op] = key_of(e, /*skip_allocators=*/true);
      allocations.push_back({e->start_time_ns_, reinterpret_cast<std::intptr_t>(a->ptr_), a->alloc_size_,
                             static_cast<std::int64_t>(a->total_allocated_), phase, op});
      continue;
    }
    if (e->tag() == EventType::Kineto && e->deviceType() == c10::DeviceType::CUDA && device.is_cuda()) {
      const auto& k = std::get<ExtraFields<EventType::Kineto>>(e->extra_fields_);
      auto& acc = keys[key_of(e, false)];
      acc.ns += static_cast<double>(k.duration_ns_);
      auto& kernel = acc.kernels[normalised_kernel_name(k.name_)];
      kernel.first += static_cast<double>(k.duration_ns_);
      kernel.second += 1;
      BusySpan span{e->start_time_ns_, e->start_time_ns_ + k.duration_ns_, -1};
      if (auto launch = k.linked_activity_.lock()) span.launched = launch->start_time_ns_;
      spans.push_back(span);
    }
  }
  const double per_step = 1.0 / std::max(1, steps);
  for (const auto& [key, acc] : keys) {
    if (acc.ns <= 0 && acc.calls <= 0) continue;
    BreakdownKey k{.phase = key.first,
                   .op = key.second,
                   .ms_per_step = acc.ns / 1e6 * per_step,
                   .calls_per_step = acc.calls * per_step};
    for (const auto& [name, kernel] : acc.kernels)
      k.kernels.push_back({name, kernel.first / 1e6 * per_step, kernel.second * per_step});
    out.keys.push_back(std::move(k));
  }
  if (out.keys.size() > kMaxBreakdownKeys) out.keys.resize(kMaxBreakdownKeys);
  if (device.is_cuda() && window_start >= 0) {
    const auto [host, other] = idle_split(std::move(spans), window_start, window_end);
    out.gpu_idle_host_wait_ms = host / 1e6 * per_step;
    out.gpu_idle_other_ms = other / 1e6 * per_step;
  }
  fill_memory(std::move(allocations), device, out);
}

}  // namespace

StepBreakdown break_down_steps(Workload& workload, const c10::Device& device, int steps, SlowdownInjector& slowdown) {
  StepBreakdown out;
  out.steps = std::max(1, steps);
  const QuietAllocatorWarnings quiet;
  auto session = profile_session(device, /*memory=*/true, [&] {
    for (int i = 0; i < out.steps; ++i) {
      RECORD_USER_SCOPE("tipbench::step");
      slowdown.before_step();
      workload.step();
      slowdown.after_step();
    }
  });
  if (!session.result) {
    out.error = session.error;
    return out;
  }
  out.step_ms = session.wall_ms / out.steps;
  try {
    reduce(*session.result, device, out.steps, out);
  } catch (const std::exception& e) {
    out.error = error_summary(e);
    out.keys.clear();
  }
  return out;
}

}  // namespace tipbench::detail
