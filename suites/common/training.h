// The workload most tips are measured on: supervised training of a reference image classifier on
// synthetic inputs staged on the device (data loading is its own suite). It runs PyTorch's
// default step; what an arm changes in the step is a StepPolicy of the tip's suite
// (step_policy.h), or the precision and optimizer every training suite may set. Example:
//   TrainingSpec spec{.model = "resnet50", .batch_size = 64};
//   spec.policies.push_back(std::make_shared<FillWithZeros>());  // the zero_grad suite's "zero" arm
//   spec.precision = Precision::bf16;                              // the amp suite's "bf16" arm
//   auto workload = make_training_workload(context, spec);
#pragma once

#include "autocast.h"
#include "optimizers.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/suite.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

class StepPolicy;  // step_policy.h

struct TrainingSpec {
  std::string model;
  std::int64_t batch_size = 0;
  models::ModelOptions model_options;
  // Forward and loss under autocast (bf16, fp16 with loss scaling); backward and step outside.
  Precision precision = Precision::fp32;
  // A model other than make_model(model, model_options), e.g. a ViT of other widths; `model`
  // then names the reference it is a variant of (its image size and classes apply).
  std::function<torch::nn::AnyModule()> build_model;
  // The optimizer and its implementation (the optimizer suite). Unset: SGD with momentum stepped
  // as Python's torch.optim.SGD would on the device (pytorch_default_impl: foreach on CUDA, the
  // per-parameter loop on a CPU).
  std::optional<OptimizerChoice> optimizer;
  // What the arm's tip changes in the step, asked in this order (step_policy.h). A workload owns
  // its policies' state: give every workload its own.
  std::vector<std::shared_ptr<StepPolicy>> policies;
};

std::unique_ptr<Workload> make_training_workload(const SuiteContext& context, const TrainingSpec& spec);
// Which reference models a suite runs when --model names none: a CNN, and with `vit` a ViT beside
// it (a tip that changes convolutions and matmuls differently: determinism, tf32, alignment). On a
// CPU the ViT runs only with `vit_on_cpu` (alignment: its widths are what it tests).
struct DefaultModels {
  bool vit = false;
  bool vit_on_cpu = false;
};
// The models a suite runs: the ones asked for, else the default for the device: small_cnn on a CPU
// (and vit_ti_16 with vit_on_cpu); on CUDA resnet50 (and vit_b_16), --quick resnet18 (and vit_ti_16).
std::vector<std::string> models_to_run(const SuiteContext& context, DefaultModels defaults = {});
// The batch size asked for, else a default per model and device (a model file: the batch of the
// built-in models of its parameter count).
std::int64_t batch_size_for(const SuiteContext& context, const std::string& model);
// Case parameters shared by the training suites: {{"model", m}, {"batch", b}}. A suite whose arms
// are slow on a CPU (16-bit float paths) passes quick_cpu_batch > 0: the batch of a --quick CPU
// run without --batch-size, which keeps the quick suite's budget small.
Levels training_params(const SuiteContext& context, const std::string& model, std::int64_t quick_cpu_batch = 0);
// The cases of a step-loop tip (sync, cuda_graphs): the training_params case and, on CUDA without
// --batch-size, also batch 8, where a step's kernels are shorter than the host needs to launch
// them (launch-bound), so host-side overheads show.
std::vector<Levels> step_loop_params(const SuiteContext& context, const std::string& model);
// An axis of training cases: a case level and its values (channels_last's precision, cudnn_benchmark's
// shapes).
struct CaseAxis {
  std::string level;
  std::vector<std::string> values;
};
struct TrainingCaseOptions {
  DefaultModels models;              // the models when --model names none (models_to_run)
  std::int64_t quick_cpu_batch = 0;  // as training_params'
  bool step_loop = false;            // step_loop_params' cases per model instead of training_params'
  bool largest_batch = false;        // and per model its {model, batch: largest} case (largest_batch.h)
};
// The cases of a training tip, as google/benchmark's ArgsProduct makes them: per model to run, its
// training_params (or step_loop_params) times every combination of the axes, in order (the last
// axis varies fastest), each with the same arms. E.g. channels_last:
//   training_cases(context, {{"nchw", ...}, {"nhwc", ...}}, {{"precision", {"fp32", "bf16"}}}, {.quick_cpu_batch = 4})
std::vector<CaseSpec> training_cases(const SuiteContext& context, const std::vector<ArmSpec>& arms,
                                     const std::vector<CaseAxis>& axes = {}, TrainingCaseOptions options = {});
// The spec a training case describes (its model and batch parameters); arms then change one knob.
TrainingSpec training_spec(const CaseSpec& c);
// "cnn", "vit" or "file" (from models::available_models()).
std::string model_family(const std::string& model);
// Why an arm that changes the model's own code (`change`, e.g. "adds a bias to every convolution")
// cannot run on `model`: a user's model file runs as written (docs/own-model.md). nullopt for a
// reference model. Asked before the family checks, so the reason names the real cause.
std::optional<std::string> model_code_fixed(const std::string& model, const std::string& change);

}  // namespace tipbench::suites
