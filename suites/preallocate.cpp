// Tip (PyTorch Tuning Guide, source 003): pre-allocate memory when input sizes vary. When a short
// batch is followed by longer ones, the caching allocator cannot serve the larger activations
// from the blocks it cached and asks the device for more (near the memory limit it frees its
// whole cache and retries); the guide's remedy is one forward and backward at the largest size
// before training, no optimizer step, gradients zeroed, so later steps are cut from blocks that
// already exist. The experiment trains a CNN on inputs that grow from half the model's image size
// to its size every 8 steps, as a length-bucketed sampler feeds a model variable-length inputs
// (InputShapes::ascending: warm-up at the smallest size, then whole cycles of the sizes timed).
// Baseline: none (PyTorch's default). Treatment: max_shape, the pre-allocation step (BatchNorm's
// running statistics put back, so both arms train the same model), timed (preallocate_ms).
// The tip is about a cold process, so every trial runs in a fresh process (on CUDA a cold caching
// allocator, cuDNN and cuBLAS as a new training job meets them; on a CPU a cold heap and oneDNN's
// per-shape primitive cache), and the note compares two things:
//   first steps   the pre-allocation plus the first cycle of sizes: the time to the 8th step
//   steady state  the step time over the later cycles, when both arms have every size cached
// CUDA records device_mallocs: the allocator's device allocations while timed. CNNs only: a ViT's
// position embedding fixes its input size.
#include "common/input_shapes.h"
#include "common/training.h"
#include "preallocate/preallocate_step.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <torch/cuda.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <numeric>

namespace tipbench::suites {

namespace {

constexpr const char* kPreallocateMs = "preallocate_ms";

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// The treatment: preallocate_step at the largest input (a micro-batch of it, if the step is
// split) before training, timed (it is the tip's cost, paid once).
class PreallocateMaxShape final : public Policy<PreallocateMaxShape> {
 public:
  std::string name() const override { return "preallocate max_shape"; }
  void prepare(StepState& state) override {
    const std::int64_t micro = state.spec().batch_size / state.micro_batches(), side = state.image_size();
    const auto labels = state.labels().narrow(0, 0, micro);
    // Untimed first, at the warm-up's smallest size: the process's cold start (cuDNN's handle and
    // engine libraries, cuBLAS's handle and workspace, the lazily loaded kernels: cudnn/Handle.cpp
    // getCudnnHandle, cuda/CublasHandlePool.cpp getCurrentCUDABlasHandle), which the none arm
    // pays in its untimed warm-up, stays out of the pre-allocation's time. The same step leaves
    // the model as it was and caches what the none arm's warm-up caches.
    const std::int64_t small = ascending_side(side, 0);
    preallocate_step(state.model(), state.input_of(small, small).narrow(0, 0, micro), labels, state.spec().precision);
    const auto input = state.input_of(side, side).narrow(0, 0, micro);
    synchronize(state.device());
    const auto started = std::chrono::steady_clock::now();
    preallocate_step(state.model(), input, labels, state.spec().precision);
    synchronize(state.device());
    took_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  }
  std::map<std::string, double> metrics(const StepState&) const override { return {{kPreallocateMs, took_ms_}}; }
  nlohmann::json info(const StepState&) const override { return {{"preallocated", true}}; }

 private:
  double took_ms_ = 0;
};

// The trial's time to its kAscendingSteps-th timed step, the pre-allocation included (0 in the
// baseline): what a cold process pays before its inputs' sizes are all cached.
std::optional<double> first_steps_ms(const Trial& t) {
  if (t.step_times_ms.size() < static_cast<std::size_t>(kAscendingSteps)) return std::nullopt;
  const auto it = t.metrics.find(kPreallocateMs);
  const double paid = it == t.metrics.end() ? 0 : it->second;
  return paid + std::accumulate(t.step_times_ms.begin(), t.step_times_ms.begin() + kAscendingSteps, 0.0);
}

// The mean step time after the first cycle: every size seen once, in both arms.
std::optional<double> steady_step_ms(const Trial& t) {
  if (t.step_times_ms.size() < 2 * static_cast<std::size_t>(kAscendingSteps)) return std::nullopt;
  const double later = std::accumulate(t.step_times_ms.begin() + kAscendingSteps, t.step_times_ms.end(), 0.0);
  return later / static_cast<double>(t.step_times_ms.size() - kAscendingSteps);
}

std::string compared(const ArmResult& treatment, const ArmResult& baseline, const TrialMetric& metric,
                     const MeasureSettings& settings) {
  const auto k = compare_arms(treatment, baseline, metric, settings);
  if (!k) return "too few blocks to compare";
  return comparison_words(*k);
}

// The median of a trial figure over the arm's trials.
double median_over_trials(const ArmResult& arm, std::optional<double> (*value)(const Trial&)) {
  std::vector<double> values;
  for (const auto& t : arm.trials) {
    if (auto v = value(t)) values.push_back(*v);
  }
  return values.empty() ? 0 : stats::median(values);
}

}  // namespace

class Preallocate final : public Suite {
 public:
  std::string name() const override { return "preallocate"; }
  std::string description() const override {
    return "input sizes that grow step by step, each trial in a fresh process: no pre-allocation (default) vs "
           "one forward and backward at the largest size first; the first steps (pre-allocation included) and the "
           "steady state, reserved memory, device allocations";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"003", "pre-allocate for the largest shape: no allocator growth mid-run"};
  }
  Isolation isolation(const SuiteContext&) const override { return Isolation::fresh_process; }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, {{"none", {{"preallocate", "none"}}}, {"max_shape", {{"preallocate", "max_shape"}}}},
                          {{"shapes", {input_shapes_name(InputShapes::ascending)}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec& c, const ArmSpec&) const override {
    const auto& model = level(c.params, "model");
    if (model_family(model) == "vit") {
      return model +
             " is a ViT: its position embedding fixes its input size, so its inputs cannot grow; the "
             "tip is measured on a CNN";
    }
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.policies.push_back(std::make_shared<InputShapesPolicy>(InputShapes::ascending));
    if (level(arm.levels, "preallocate") == "max_shape")
      spec.policies.push_back(std::make_shared<PreallocateMaxShape>());
    return make_training_workload(context, spec);
  }
  // The first steps and the steady state, max_shape against none by the harness's comparison
  // rule; on CUDA how often each arm's allocator asked the device for memory while timed.
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    std::vector<std::string> out;
    const TrialMetric first{"first_steps_ms", false, first_steps_ms}, steady{"steady_step_ms", false, steady_step_ms};
    for (const auto& c : result.cases) {
      const ArmResult* none = find_arm(c, "none");
      const ArmResult* max_shape = find_arm(c, "max_shape");
      if (none && max_shape && none->status == ArmStatus::ok && max_shape->status == ArmStatus::ok) {
        out.push_back(fmt::format(
            "{}: first steps (the pre-allocation and the first {} steps, median): none {:.1f} ms, max_shape {:.1f} "
            "ms, {} (lower is better); steady state (mean step after the first cycle): {}",
            c.name, kAscendingSteps, median_over_trials(*none, first_steps_ms),
            median_over_trials(*max_shape, first_steps_ms), compared(*max_shape, *none, first, settings),
            compared(*max_shape, *none, steady, settings)));
      }
      std::vector<std::string> parts;
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok) continue;
        if (auto it = arm.metrics.find("device_mallocs"); it != arm.metrics.end()) {
          parts.push_back(fmt::format("{} {:.0f}", arm.arm, it->second.median));
        }
      }
      if (!parts.empty()) {
        out.push_back(
            fmt::format("{}: device allocations while timed (median per trial): {}", c.name, fmt::join(parts, ", ")));
      }
    }
    return out;
  }
};

TIPBENCH_REGISTER_SUITE(Preallocate);

}  // namespace tipbench::suites
