// A training step that runs in the Python worker (python_worker.h): the same model, batch,
// precision, memory format, optimizer and synthetic inputs as tipbench's C++ step (training.h),
// in Python eager or through torch.compile. The harness warms it up and interleaves it like any
// arm; the worker times its steps where they run (Workload::steps_run_elsewhere). Example:
//   auto eager = make_python_step_workload(context, {.model = "resnet18", .batch_size = 8});
//   auto compiled = make_python_step_workload(context, {.model = "resnet18", .batch_size = 8,
//                                                       .compile = "default"});
#pragma once

#include "autocast.h"
#include "python_lines.h"
#include "tipbench/suite/suite.h"
#include "tipbench/results/suite_options.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

// A recipe's Python lines (its tips' PythonLines together, as recipe.py holds them), applied by
// the worker to its step: setup before the model is built, model lines after, the optimizer's
// keyword arguments, batch lines once on the staged inputs, autocast and GradScaler (the slots of
// the model's own code, comments and evaluation are not the training step's).
struct PythonRecipe {
  PythonLines lines;
  std::vector<std::string> ingredients;  // their keys, recorded
  std::vector<std::string> not_applied;  // tips whose Python is only a comment (CUDA graphs), recorded
};

struct PythonStepSpec {
  std::string model;  // a reference model, or a user's .pt2 model file by its name
  std::int64_t batch_size = 0;
  Precision precision = Precision::fp32;
  bool channels_last = false;
  // torch.compile's mode ("default", "max-autotune-no-cudagraphs", "reduce-overhead"); empty:
  // eager. A compiled arm compiles in its own empty Inductor cache (the cold compile), checks
  // `numerics_steps` compiled steps against eager ones, and with `warm_compile` compiles again
  // in a second worker over the same cache (the warm compile), which then runs the trials.
  std::string compile;
  bool warm_compile = true;
  int numerics_steps = 3;
  // More graph breaks than this make the arm invalid (recorded, not compared); negative: no limit.
  int max_graph_breaks = -1;
  double timeout_s = 1800;             // for any one request (a cold compile of a large model on a CPU is minutes)
  std::optional<PythonRecipe> recipe;  // the recipe suite's python_recipe arm
  std::map<std::string, std::string> environment;  // the worker's, on top of this process's (LD_PRELOAD)
};

// --python-timeout: how long the harness waits for any one answer of a worker before it kills it
// and fails the arm (declared by the compile suite; every Python arm reads it).
extern const SuiteOption kPythonTimeoutOption;

std::unique_ptr<Workload> make_python_step_workload(const SuiteContext& context, const PythonStepSpec& spec);

// "python_eager" / "torch.compile(mode=...)" / "python_recipe": how an arm's step ran, as its info records it.
std::string python_step_name(const PythonStepSpec& spec);

// The arm "python_eager" of a C++ training suite: the case's baseline step (`baseline`, arm 0's
// levels) run in the worker by Python eager, beside tipbench's C++ step, so the case's ratio says
// whether the C++ step is what a Python user's step costs. Its levels are the baseline's and
// {"step", "python_eager"}; is_python_eager_arm tells it apart in prepare().
ArmSpec python_eager_arm(const ArmSpec& baseline);
bool is_python_eager_arm(const ArmSpec& arm);
// That arm's workload: `spec`'s model, batch, precision and memory format (the baseline's, which
// changes nothing else in PyTorch's default step) in Python eager.
std::unique_ptr<Workload> make_python_eager_workload(const SuiteContext& context, const struct TrainingSpec& spec);
// For a case with both arms measured: "CASE: tipbench's C++ step (none) against Python eager: x1.04
// [1.02, 1.06] faster" (the C++ baseline's throughput over the python_eager arm's, by the harness's
// rule); nullopt otherwise.
std::optional<std::string> cpp_against_python_note(const CaseResult& c, const MeasureSettings& settings);
// That note of every case of `result` that has one.
std::vector<std::string> cpp_against_python_notes(const SuiteResult& result, const MeasureSettings& settings);

}  // namespace tipbench::suites
