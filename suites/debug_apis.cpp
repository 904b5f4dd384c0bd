// Tip: turn the debugging APIs off for real runs. Anomaly detection records a stack trace for
// every autograd node and checks every backward output for NaN; the autograd profiler records
// every op. Both are easy to leave on after a debugging session. Baseline: both off (PyTorch's
// default). Treatments: anomaly detection on (torch.autograd.set_detect_anomaly(True)); the
// profiler recording (Kineto, CPU ops, plus CUDA kernels on a GPU; nothing exported).
// Both knobs are process-wide: the workload switches them back off when the trial ends.
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"

#include <torch/csrc/autograd/anomaly_mode.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <fmt/format.h>

#include <set>

namespace tipbench::suites {

namespace {

// --quick on a CPU: an anomaly-detection step of small_cnn at batch 32 took 210 ms against 13.5 ms
// without (2 EPYC cores), so the quick batch is 8.
constexpr std::int64_t kDebugApisQuickCpuBatch = 8;

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

std::set<ActivityType> profiler_activities(const c10::Device& device) {
  std::set<ActivityType> out{ActivityType::CPU};
  if (device.is_cuda()) out.insert(ActivityType::CUDA);
  return out;
}

std::unique_ptr<Workload> with_anomaly_detection(std::unique_ptr<Workload> inner) {
  torch::autograd::AnomalyMode::set_enabled(true, /*check_nan=*/true);
  return with_restore(std::move(inner), [] { torch::autograd::AnomalyMode::set_enabled(false); },
                      {{"anomaly_detection", torch::autograd::AnomalyMode::is_enabled()}});
}

// Recording from here (warm-up included) until the trial ends; the events are dropped then.
std::unique_ptr<Workload> with_profiler(std::unique_ptr<Workload> inner, const c10::Device& device) {
  ::setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);  // Kineto's stderr chatter, as for --profile
  const ProfilerConfig config(ProfilerState::KINETO);
  const auto activities = profiler_activities(device);
  kineto::prepareProfiler(config, activities);
  kineto::enableProfiler(config, activities);
  // Never throws (it runs in a destructor): the profiler may already be off.
  auto stop = [] {
    if (!torch::profiler::impl::profilerEnabled()) return;
    try {
      kineto::disableProfiler();
    } catch (const std::exception&) {
    }
  };
  return with_restore(
      std::move(inner), stop,
      {{"profiler", fmt::format("Kineto, {} activities, no export", device.is_cuda() ? "CPU + CUDA" : "CPU")}});
}

// "anomaly: +3.1 ms per step (x1.42 step time)" for every arm measured beside the baseline.
std::vector<std::string> overhead_notes(const SuiteResult& result) {
  std::vector<std::string> out;
  for (const auto& c : result.cases) {
    if (c.arms.empty() || c.arms[0].status != ArmStatus::ok) continue;
    const double base = c.arms[0].step_time_ms.median;
    std::vector<std::string> parts;
    for (std::size_t i = 1; i < c.arms.size(); ++i) {
      const ArmResult& a = c.arms[i];
      if (a.status != ArmStatus::ok || base <= 0) continue;
      parts.push_back(fmt::format("{} {:+.2f} ms per step (x{:.2f} the median step time)", a.arm,
                                  a.step_time_ms.median - base, a.step_time_ms.median / base));
    }
    if (!parts.empty()) {
      out.push_back(fmt::format("{}: overhead over {:.2f} ms with both off: {}", c.name, base, fmt::join(parts, "; ")));
    }
  }
  return out;
}

}  // namespace

class DebugApis final : public Suite {
 public:
  std::string name() const override { return "debug_apis"; }
  std::string description() const override {
    return "debugging APIs off (default) vs anomaly detection on vs the autograd profiler recording";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000, 003", "debugging APIs (anomaly detection, profiler) cost time when left on"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(
        context,
        {{"off", {{"debug", "off"}}}, {"anomaly", {{"debug", "anomaly"}}}, {"profiler", {{"debug", "profiler"}}}}, {},
        {.quick_cpu_batch = kDebugApisQuickCpuBatch});
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    auto workload = make_training_workload(context, training_spec(c));
    const auto& debug = level(arm.levels, "debug");
    if (debug == "anomaly") return with_anomaly_detection(std::move(workload));
    if (debug == "profiler") return with_profiler(std::move(workload), context.device);
    return workload;
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    return overhead_notes(result);
  }
};

TIPBENCH_REGISTER_SUITE(DebugApis);

}  // namespace tipbench::suites
