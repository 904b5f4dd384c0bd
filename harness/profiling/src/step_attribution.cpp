#include "tipbench/profiling/step_attribution.h"

#include "tipbench/profiling/fixture_recorder.h"
#include "kineto_session.h"
#include "tipbench/device/step_timer.h"
#include "tipbench/device/device_allocator.h"
#include "tipbench/common/error_text.h"
#include "tipbench/explain/profiled_counts.h"
#include "tipbench/explain/profiled_steps.h"

#include <ATen/record_function.h>
#include <c10/util/Logging.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/collection.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tipbench::detail {

namespace {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::EventType;
using torch::profiler::impl::ExtraFields;
using Event = torch::profiler::impl::Result;
using EventPtr = std::shared_ptr<Event>;

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

ProfiledKind kind_of_activity(libkineto::ActivityType type) {
  using libkineto::ActivityType;
  switch (type) {
    case ActivityType::CONCURRENT_KERNEL: return ProfiledKind::kernel;
    case ActivityType::GPU_MEMCPY: return ProfiledKind::memcpy;
    case ActivityType::GPU_MEMSET: return ProfiledKind::memset;
    case ActivityType::CUDA_RUNTIME:
    case ActivityType::CUDA_DRIVER: return ProfiledKind::runtime;
    case ActivityType::GPU_USER_ANNOTATION: return ProfiledKind::gpu_annotation;
    default: return ProfiledKind::other;
  }
}

ProfiledKind kind_of(const Event& e) {
  switch (e.tag()) {
    case EventType::TorchOp: return ProfiledKind::op;
    case EventType::Allocation: return ProfiledKind::allocation;
    case EventType::Kineto:
      return kind_of_activity(std::get<ExtraFields<EventType::Kineto>>(e.extra_fields_).activity_type_);
    default: return ProfiledKind::other;
  }
}

// What a copy or memset moved: Kineto writes CUPTI's record into the activity's metadata as
// '"bytes": N' (libkineto/src/CuptiActivity.cpp, GpuActivity<CUpti_ActivityMemcpy>,
// <CUpti_ActivityMemcpy2> and <CUpti_ActivityMemset>::metadataJson). 0 when it is not there.
std::int64_t bytes_in_metadata(ProfiledKind kind, const std::string& metadata) {
  if (kind != ProfiledKind::memcpy && kind != ProfiledKind::memset) return 0;
  const auto at = metadata.find("\"bytes\":");
  if (at == std::string::npos) return 0;
  const long long bytes = std::strtoll(metadata.c_str() + at + 8, nullptr, 10);
  return bytes > 0 ? static_cast<std::int64_t>(bytes) : 0;
}

// The profiler's result as plain values (profiled_steps.h), read against
// torch/csrc/profiler/collection.{h,cpp} (2.11): the event tree holds every op, allocation and
// Kineto activity reachable from a CPU root (materializeOpEvents keeps only CPU-typed roots), with
// parent_ (build_tree; a device event's launching runtime call, TransferEvents::setParents) and a
// Kineto event's linked_activity_ (its correlated op). A device activity no runtime call parents
// is a root of device type and missing from the tree: it is taken from the flat event list, so
// the device's busy time is whole.
std::vector<ProfiledEvent> plain_events(const kineto::ProfilerResult& result) {
  std::vector<EventPtr> order;
  std::unordered_map<const Event*, std::int64_t> index;
  std::vector<EventPtr> stack(result.event_tree().rbegin(), result.event_tree().rend());
  while (!stack.empty()) {  // parents before children
    auto e = std::move(stack.back());
    stack.pop_back();
    if (!e || index.contains(e.get())) continue;
    index.emplace(e.get(), static_cast<std::int64_t>(order.size()));
    for (auto it = e->children_.rbegin(); it != e->children_.rend(); ++it) stack.push_back(*it);
    order.push_back(std::move(e));
  }
  const auto index_of = [&](const EventPtr& p) -> std::int64_t {
    if (!p) return -1;
    const auto it = index.find(p.get());
    return it == index.end() ? -1 : it->second;
  };
  std::vector<ProfiledEvent> out;
  out.reserve(order.size());
  std::set<std::tuple<std::int64_t, std::int64_t, std::string>> device_seen;
  for (const auto& e : order) {
    ProfiledEvent p;
    p.kind = kind_of(*e);
    p.name = e->name();
    p.start_ns = e->start_time_ns_;
    p.end_ns = std::max(e->start_time_ns_, e->endTimeNS());
    p.thread = e->start_tid_;
    p.parent = index_of(e->parent_.lock());
    if (const auto* k = std::get_if<ExtraFields<EventType::Kineto>>(&e->extra_fields_)) {
      p.linked = index_of(k->linked_activity_.lock());
      if (is_device_work(p.kind)) {
        p.device = e->kineto_info_.device;
        p.stream = e->kineto_info_.resource;
        p.thread = 0;
        p.bytes = bytes_in_metadata(p.kind, k->metadata_json_);
        device_seen.emplace(p.start_ns, p.end_ns, p.name);
      }
    }
    if (const auto* a = std::get_if<ExtraFields<EventType::Allocation>>(&e->extra_fields_)) {
      p.device_type = a->device_type_ == c10::DeviceType::CUDA ? "cuda" : c10::DeviceTypeName(a->device_type_, true);
      p.device = a->device_index_;
      p.ptr = reinterpret_cast<std::int64_t>(a->ptr_);
      p.bytes = a->alloc_size_;
      p.total_allocated = static_cast<std::int64_t>(a->total_allocated_);
    }
    out.push_back(std::move(p));
  }
  for (const auto& k : result.events()) {
    const auto kind = kind_of_activity(static_cast<libkineto::ActivityType>(k.activityType()));
    if (!is_device_work(kind) || k.deviceType() != c10::DeviceType::CUDA) continue;
    const auto start = static_cast<std::int64_t>(k.startNs());
    const auto end = std::max(start, static_cast<std::int64_t>(k.endNs()));
    if (device_seen.contains({start, end, k.name()})) continue;
    out.push_back({.kind = kind,
                   .name = k.name(),
                   .start_ns = start,
                   .end_ns = end,
                   .device = k.deviceIndex(),
                   .stream = k.deviceResourceId(),
                   .bytes = bytes_in_metadata(kind, k.metadataJson())});
  }
  return out;
}

}  // namespace

RecordedSteps record_steps(Workload& workload, const c10::Device& device, int steps, SlowdownInjector& slowdown,
                           const BreakdownRecording& recording) {
  RecordedSteps out;
  ProfiledSteps& profiled = out.steps;
  profiled.steps = std::max(1, steps);
  profiled.device_type = device.is_cuda() ? "cuda" : "cpu";
  profiled.device_index = device.has_index() ? device.index() : 0;
  profiled.held_by_others = recording.held_by_others_bytes;
  if (auto* allocator = device.is_cuda() ? device_allocator(device) : nullptr) {
    synchronize(device);
    profiled.allocated_at_start = allocator->read().allocated_current;
  }
  const QuietAllocatorWarnings quiet;
  double steps_ms = 0;
  auto session = profile_session(device, /*memory=*/true, [&] {
    const auto one_step = [&] {
      slowdown.before_step();
      workload.step();
      slowdown.after_step();
    };
    {
      // Recorded, never attributed (profiled_steps.h: kLeadInScope): the attributed steps start
      // with the device busy, as the timed ones do, and a new session's lost head falls here.
      RECORD_USER_SCOPE(kLeadInScope);
      one_step();
    }
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < profiled.steps; ++i) {
      RECORD_USER_SCOPE(kStepScope);
      one_step();
    }
    synchronize(device);
    steps_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  });
  if (!session.result) {
    out.error = session.error;
    return out;
  }
  profiled.wall_ms = steps_ms;
  try {
    profiled.events = plain_events(*session.result);
    if (!recording.arm_name.empty() && fixtures_wanted()) {
      auto fixture = profiled_steps_to_json(profiled);
      fixture["arm"] = recording.arm_name;  // pairs it with the trial's breakdown in the result
      fixture["block"] = recording.block;
      record_fixture("profiled", recording.arm_name, recording.block, fixture);
    }
  } catch (const std::exception& e) {
    out.error = error_summary(e);
  }
  return out;
}

StepBreakdown breakdown_of(const RecordedSteps& recorded) {
  const int steps = std::max(1, recorded.steps.steps);
  if (!recorded.error.empty()) return StepBreakdown{.steps = steps, .error = recorded.error};
  try {
    return reduce_profiled_steps(recorded.steps);
  } catch (const std::exception& e) {
    return StepBreakdown{.steps = steps, .error = error_summary(e)};
  }
}

StepCounts counts_of(const RecordedSteps& recorded) {
  const int steps = std::max(1, recorded.steps.steps);
  if (!recorded.error.empty()) return StepCounts{.steps = steps, .error = recorded.error};
  try {
    return count_profiled_steps(recorded.steps);
  } catch (const std::exception& e) {
    return StepCounts{.steps = steps, .error = error_summary(e)};
  }
}

}  // namespace tipbench::detail
