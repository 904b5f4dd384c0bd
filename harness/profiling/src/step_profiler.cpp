#include "tipbench/profiling/step_profiler.h"

#include "kineto_session.h"
#include "tipbench/common/text.h"
#include "tipbench/common/error_text.h"

#include <ActivityType.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

namespace tipbench::detail {

namespace {

struct Interval {
  std::string name;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

struct Accumulated {
  double self_ns = 0;
  std::int64_t calls = 0;
};

// Self time of nested CPU ops: each op's duration minus its direct children's, per thread
// (Kineto records ranges; an op's children are the ranges that start and end inside it).
std::map<std::string, Accumulated> cpu_self_times(std::map<std::uint64_t, std::vector<Interval>> by_thread) {
  std::map<std::string, Accumulated> totals;
  for (auto& [thread, ops] : by_thread) {
    std::sort(ops.begin(), ops.end(), [](const Interval& a, const Interval& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;  // parents first
    });
    std::vector<std::pair<const Interval*, double>> stack;  // open ops and their self time so far
    auto close = [&] {
      auto& total = totals[stack.back().first->name];
      total.self_ns += std::max(0.0, stack.back().second);
      total.calls += 1;
      stack.pop_back();
    };
    for (const auto& op : ops) {
      while (!stack.empty() && stack.back().first->end_ns <= op.start_ns) close();
      const double duration = static_cast<double>(op.end_ns - op.start_ns);
      if (!stack.empty()) stack.back().second -= duration;
      stack.emplace_back(&op, duration);
    }
    while (!stack.empty()) close();
  }
  return totals;
}

bool is_device_work(std::uint8_t activity) {
  using libkineto::ActivityType;
  const auto type = static_cast<ActivityType>(activity);
  return type == ActivityType::CONCURRENT_KERNEL || type == ActivityType::GPU_MEMCPY ||
         type == ActivityType::GPU_MEMSET;
}

std::vector<OpTime> top_five(const std::map<std::string, Accumulated>& totals, int steps) {
  std::vector<OpTime> ops;
  for (const auto& [name, total] : totals) {
    ops.push_back({name, total.self_ns / 1e6 / steps, total.calls / steps});
  }
  std::sort(ops.begin(), ops.end(),
            [](const OpTime& a, const OpTime& b) { return a.self_ms_per_step > b.self_ms_per_step; });
  if (ops.size() > 5) ops.resize(5);
  return ops;
}

}  // namespace

std::string trace_file_name(const std::string& arm_name) { return file_stem_of(arm_name) + ".trace.json"; }

ArmProfile profile_steps(Workload& workload, const c10::Device& device, int steps, const std::string& trace_path) {
  ArmProfile profile;
  profile.steps = std::max(1, steps);
  auto session = profile_session(device, /*memory=*/false, [&] {
    for (int i = 0; i < profile.steps; ++i) workload.step();
  });
  if (!session.result) {
    profile.error = session.error;
    return profile;
  }
  try {
    std::map<std::uint64_t, std::vector<Interval>> cpu_ops;
    std::map<std::string, Accumulated> kernels;
    for (const auto& e : session.result->events()) {
      if (e.isAsync() || e.endNs() < e.startNs()) continue;
      if (e.deviceType() == c10::DeviceType::CUDA) {
        // Device work only: not the GPU span Kineto projects for a RecordFunction scope
        // (GPU_USER_ANNOTATION, which PyTorch's own table skips: profiler_util.py,
        // `not evt.is_user_annotation`).
        if (!is_device_work(e.activityType())) continue;
        auto& k = kernels[e.name()];
        k.self_ns += static_cast<double>(e.durationNs());
        k.calls += 1;
      } else if (!e.name().starts_with("tipbench::")) {
        // Not the phase scopes: tipbench::backward's children run on the autograd engine's thread,
        // so its self time on this one would be the whole backward pass.
        cpu_ops[e.startThreadId()].push_back({e.name(), e.startNs(), e.endNs()});
      }
    }
    profile.top_cpu_ops = top_five(cpu_self_times(std::move(cpu_ops)), profile.steps);
    profile.top_cuda_kernels = top_five(kernels, profile.steps);
    const std::filesystem::path path(trace_path);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    const std::string partial = trace_path + ".partial";
    session.result->save(partial);
    std::filesystem::rename(partial, path);  // a reader never sees half a trace
    profile.trace_file = trace_path;
  } catch (const std::exception& e) {
    profile.error = error_summary(e);
  }
  return profile;
}

}  // namespace tipbench::detail
