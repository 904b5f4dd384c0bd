// Tip: torch.compile the model. Inductor fuses the elementwise work around the matrix products
// into generated kernels (Triton on a GPU, C++/OpenMP on a CPU), and "reduce-overhead" replays
// the step as CUDA graphs. It exists only in Python, so every arm runs in the Python worker
// (common/python_step.h, docs/python-worker.md): the baseline is Python eager, PyTorch's default.
// Treatments: mode "default", "max-autotune-no-cudagraphs" (not --quick), "reduce-overhead"
// (CUDA). Each compiled arm records its cold compile (an empty Inductor cache), its warm compile
// (a second process over the same cache; not --quick), graphs, graph breaks and recompiles, and
// agreement with eager after a few steps; the note says after how many steps a compile pays back.
#include "common/python_step.h"
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>

#include <cmath>

namespace tipbench::suites {

namespace {

const SuiteOption kWarmOption{.name = "compile-warm",
                              .type = OptionType::choice,
                              .default_value = "auto",
                              .help =
                                  "also time the warm compile (a second worker over the first's Inductor "
                                  "cache): on, off, or auto (on, off under --quick)",
                              .choices = {"auto", "on", "off"}};
// Under --quick on a CPU the compiled arm alone took 38 to 61 s of a 177 to 254 s quick run here
// (2 Xeon cores, 2026-11-28 and 29), most of it Inductor's check of the CPU's vector ISAs, which
// every new process pays (timed alone: 37 to 42 s in an empty cache, 26 s over a full one;
// docs/python-worker.md). So --quick leaves the suite out there unless asked.
const SuiteOption kQuickCpuOption{.name = "compile-quick-cpu",
                                  .type = OptionType::choice,
                                  .default_value = "skip",
                                  .help =
                                      "under --quick on a CPU: skip (its compiled arm took 38 to 61 s of a quick run "
                                      "on 2 cores) or run",
                                  .choices = {"skip", "run"}};
const SuiteOption kMaxGraphBreaksOption{.name = "compile-max-graph-breaks",
                                        .type = OptionType::number,
                                        .default_value = "-1",
                                        .help =
                                            "a compiled arm with more graph breaks is invalid: recorded, "
                                            "not compared; -1: no limit",
                                        .min = -1,
                                        .max = 1e6};

// torch.compile's modes by arm name.
const std::map<std::string, std::string> kModes = {
    {"default", "default"}, {"max_autotune", "max-autotune-no-cudagraphs"}, {"reduce_overhead", "reduce-overhead"}};

double median_step_ms(const ArmResult& arm) { return arm.step_time_ms.median; }

}  // namespace

class Compile final : public Suite {
 public:
  std::string name() const override { return "compile"; }
  std::string description() const override {
    return "torch.compile(model) in the Python worker: eager (default) vs modes default, "
           "max-autotune-no-cudagraphs and reduce-overhead; compile times, graph breaks, numerics";
  }
  std::vector<SuiteOption> options() const override {
    return {kWarmOption, kQuickCpuOption, kMaxGraphBreaksOption, kPythonTimeoutOption};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<ArmSpec> arms = {{"eager", {{"compile", "none"}}}, {"default", {{"compile", "default"}}}};
    if (!context.quick) arms.push_back({"max_autotune", {{"compile", "max_autotune"}}});
    arms.push_back({"reduce_overhead", {{"compile", "reduce_overhead"}}});
    return training_cases(context, arms, {}, {.models = {.vit = true}, .quick_cpu_batch = 8});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec&,
                                         const ArmSpec& arm) const override {
    if (context.quick && !context.device.is_cuda() && kQuickCpuOption.text(context.options) == "skip") {
      return "left out of --quick on a CPU: its compiled arm took 38 to 61 s of a quick run on 2 "
             "cores (--compile-quick-cpu run, or run without --quick)";
    }
    if (level(arm.levels, "compile") == "reduce_overhead" && !context.device.is_cuda()) {
      return "reduce-overhead replays CUDA graphs: CUDA only";
    }
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const TrainingSpec training = training_spec(c);
    PythonStepSpec spec{.model = training.model, .batch_size = training.batch_size};
    const std::string mode = level(arm.levels, "compile");
    if (mode != "none") spec.compile = kModes.at(mode);
    const std::string warm = kWarmOption.text(context.options);
    spec.warm_compile = warm == "on" || (warm == "auto" && !context.quick);
    spec.max_graph_breaks = static_cast<int>(kMaxGraphBreaksOption.number(context.options));
    spec.timeout_s = kPythonTimeoutOption.number(context.options);
    return make_python_step_workload(context, spec);
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      const ArmResult* eager = find_arm(c, "eager");
      if (eager == nullptr || eager->status != ArmStatus::ok) continue;
      for (const auto& arm : c.arms) {
        if (arm.arm == "eager" || arm.status != ArmStatus::ok || !arm.info.contains("compile")) continue;
        out.push_back(fmt::format("{} {}: {}", c.name, arm.arm, compiled_words(arm, *eager, settings)));
      }
    }
    return out;
  }

 private:
  static std::string compiled_words(const ArmResult& arm, const ArmResult& eager, const MeasureSettings& settings) {
    const auto& compile = arm.info["compile"];
    std::string words = fmt::format("cold compile {:.1f} s", compile.value("cold_s", 0.0));
    if (compile.contains("warm_s")) words += fmt::format(", warm {:.1f} s", compile.value("warm_s", 0.0));
    words +=
        fmt::format("; {} graph(s), {} graph break(s)", compile.value("graphs", 0), compile.value("graph_breaks", 0));
    if (auto it = arm.metrics.find("recompiles"); it != arm.metrics.end()) {
      words += fmt::format(", {:.0f} recompile(s) while measured", it->second.median);
    }
    const auto numerics = compile.value("numerics", nlohmann::json::object());
    if (numerics.value("stochastic", false)) {
      words += "; numerics not compared: the step draws random numbers (dropout), which Inductor draws its own way";
    } else if (numerics.contains("max_relative_difference") && numerics["max_relative_difference"].is_number()) {
      words += fmt::format("; agrees with eager after {} steps (largest relative difference {:.1e}, tolerance {:.1e})",
                           numerics.value("steps", 0), numerics["max_relative_difference"].get<double>(),
                           numerics.value("tolerance", 0.0));
    }
    const auto compared = compare_arms(arm, eager, trial_throughput(), settings);
    if (!compared) return words;
    words += "; steady state " + comparison_words(*compared);
    const double saved_ms = median_step_ms(eager) - median_step_ms(arm);
    const bool faster = compared->verdict == stats::Verdict::faster ||
                        (compared->verdict == stats::Verdict::under_threshold && compared->estimate.ratio > 1);
    if (!faster || saved_ms <= 0) {
      return words + "; the compile is not paid back by a faster step";
    }
    const double cold_ms = compile.value("cold_s", 0.0) * 1000;
    words += fmt::format("; paid back after {:.0f} steps ({:.2f} ms saved per step)", std::ceil(cold_ms / saved_ms),
                         saved_ms);
    if (compile.contains("warm_s")) {
      words += fmt::format(", {:.0f} with a warm cache", std::ceil(compile.value("warm_s", 0.0) * 1000 / saved_ms));
    }
    return words;
  }
};

TIPBENCH_REGISTER_SUITE(Compile);
// In a recipe: recipe.py compiles the model; the recipe suite's C++ arms cannot, its Python arms
// (python_default, python_recipe) do.
TIPBENCH_REGISTER_INGREDIENT(compile, {.tip = "compile",
                                       .arm = "default",
                                       .python = {.model = {"model = torch.compile(model)"}},
                                       .python_only = true});

}  // namespace tipbench::suites
