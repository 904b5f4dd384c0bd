// Tip: torch.backends.cudnn.benchmark = true autotunes the convolution algorithm per input shape.
// It pays off when shapes are fixed; when they change every step, every new shape is autotuned.
// Baseline: benchmark off (the default). Treatment: on. The flag and cuDNN's algorithm cache are
// process-wide, so every trial runs in a fresh process. Two cases per model:
//   shapes:fixed     one shape: the autotuner searches during the warm-up, the timed steps reuse it
//   shapes:varying   a new shape every timed step (each autotuned again under `on`); the warm-up
//                    ends with new shapes too (InputShapes::varying), so the trial's step count
//                    is sized by a new-shape step, not by a cached one
// The autotuner's search allocates workspaces while it tries algorithms; the note sets each arm's
// peak over the whole trial (the search included) beside its peak over the timed steps alone
// (MemoryUse::timed_peak_allocated_bytes), and compares the timed steps' memory: with fixed
// shapes that is the steady state, with a new shape every step under `on` it is the autotuner's
// own memory (it searches in every timed step), and the note says which.
#include "common/input_shapes.h"
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <ATen/Context.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::suites {

namespace {

std::optional<double> timed_peak_bytes(const Trial& t) {
  if (!t.memory.timed_peak_allocated_bytes) return std::nullopt;
  return static_cast<double>(*t.memory.timed_peak_allocated_bytes);
}

double median_mib(const ArmResult& arm, std::optional<std::int64_t> MemoryUse::*field) {
  std::vector<double> values;
  for (const auto& t : arm.trials) {
    if (auto v = t.memory.*field) values.push_back(static_cast<double>(*v) / (1 << 20));
  }
  return values.empty() ? 0 : stats::median(values);
}

// "off 812 / 790 MiB, on 1210 / 792 MiB; the timed steps' memory, on against off: x1.003 [...] ..."
std::optional<std::string> memory_note(const CaseResult& c, const MeasureSettings& settings) {
  std::vector<std::string> parts;
  const ArmResult* off = find_arm(c, "off");
  const ArmResult* on = find_arm(c, "on");
  for (const ArmResult* arm : {off, on}) {
    if (!arm || arm->status != ArmStatus::ok || median_mib(*arm, &MemoryUse::timed_peak_allocated_bytes) == 0) {
      return std::nullopt;
    }
    parts.push_back(fmt::format("{} {:.0f} / {:.0f} MiB", arm->arm, median_mib(*arm, &MemoryUse::peak_allocated_bytes),
                                median_mib(*arm, &MemoryUse::timed_peak_allocated_bytes)));
  }
  const auto k = compare_arms(*on, *off, {"timed_peak_allocated_bytes", false, timed_peak_bytes}, settings);
  const std::string compared = k ? comparison_words(*k) : std::string("too few blocks to compare");
  // A new shape every step: `on` autotunes in every timed step, so its timed steps' memory is the
  // search's, not a steady state's.
  const bool varying = find_level(c.params, "shapes") == input_shapes_name(InputShapes::varying);
  return fmt::format(
      "{}: peak allocated over the trial (build, warm-up and the autotuner's search) / over the timed steps alone, "
      "median: {}; the timed steps' memory ({}), on against off: {}",
      c.name, fmt::join(parts, ", "),
      varying ? "on searches again in every one of them: the autotuner's memory" : "the steady state", compared);
}

}  // namespace

class CudnnBenchmark final : public Suite {
 public:
  std::string name() const override { return "cudnn_benchmark"; }
  std::string description() const override {
    return "cudnn.benchmark off (default) vs on, for fixed input shapes and for a new shape every step";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000-004", "1.27-1.70x faster forward and backward (002)"};
  }
  Isolation isolation(const SuiteContext&) const override { return Isolation::fresh_process; }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(
        context, {{"off", {{"cudnn_benchmark", "off"}}}, {"on", {{"cudnn_benchmark", "on"}}}},
        {{"shapes", {input_shapes_name(InputShapes::fixed), input_shapes_name(InputShapes::varying)}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec&) const override {
    if (!context.device.is_cuda()) {
      return "cudnn.benchmark tunes cuDNN convolutions on a CUDA device; this run is on " + context.device.str();
    }
    if (!at::globalContext().hasCuDNN()) return "this LibTorch build has no cuDNN";
    const auto& model = level(c.params, "model");
    if (model_family(model) == "vit") return model + " is not a CNN; cudnn.benchmark tunes convolutions";
    return std::nullopt;
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      if (auto note = memory_note(c, settings)) out.push_back(std::move(*note));
    }
    return out;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    at::globalContext().setBenchmarkCuDNN(level(arm.levels, "cudnn_benchmark") == "on");
    TrainingSpec spec = training_spec(c);
    if (level(c.params, "shapes") == "varying") {
      spec.policies.push_back(std::make_shared<InputShapesPolicy>(InputShapes::varying));
    }
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(CudnnBenchmark);
// The autotuner's cache outlives any flag put back: a recipe holding it runs in fresh processes.
TIPBENCH_REGISTER_INGREDIENT(cudnn_benchmark, {.tip = "cudnn_benchmark",
                                               .arm = "on",
                                               .alone_case = {{"shapes", "fixed"}},
                                               .changes = {kChangesReproducibility},
                                               .python = {.setup = {"torch.backends.cudnn.benchmark = True"}},
                                               .sticky = true,
                                               .apply = [](const SuiteContext&, TrainingSpec&) -> Restore {
                                                 at::globalContext().setBenchmarkCuDNN(true);
                                                 return {};
                                               }});

}  // namespace tipbench::suites
