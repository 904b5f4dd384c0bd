// The workload most tips are measured on: supervised training of a reference image classifier on
// synthetic inputs staged on the device (data loading is its own suite). A suite states what its
// arm changes; everything else is the same for every arm. Example:
//   TrainingSpec spec{.model = "resnet50", .batch_size = 64};
//   spec.set_to_none = false;                       // the zero_grad suite's "zero" arm
//   spec.precision = Precision::bf16;               // the amp suite's "bf16" arm
//   auto workload = make_training_workload(context, spec);
#pragma once

#include "autocast.h"
#include "optimizers.h"
#include "tipbench/models/model.h"
#include "tipbench/suite.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tipbench::suites {

enum class InputShapes {
  fixed,    // every step the same (batch, 3, size, size)
  varying,  // warm-up at the fixed shape, then a shape not seen before at every timed step
  // Warm-up at the smallest shape, then timed steps whose size grows from half the model's image
  // size to its size and starts again (ascending_side), as a length-bucketed sampler feeds a
  // model variable-length inputs: a short batch followed by longer ones.
  ascending,
};

// The side of timed step `step` under InputShapes::ascending: kAscendingSteps sizes from base/2
// up to base, repeated.
inline constexpr std::int64_t kAscendingSteps = 8;
std::int64_t ascending_side(std::int64_t base, std::int64_t step);

// Where the tensors a step needs besides the input batch (its labels, noise added to the input)
// come from.
enum class StepTensors {
  staged,  // made once before timing, reused by every step (every suite but device_creation)
  host,    // made on the host every step, then copied to the device: torch.randn(...).cuda()
  device,  // made on the device every step: torch.randn(..., device=device)
};

struct TrainingSpec {
  std::string model;
  std::int64_t batch_size = 0;
  models::ModelOptions model_options;
  bool set_to_none = true;  // optimizer.zero_grad(set_to_none): LibTorch's default is true
  InputShapes shapes = InputShapes::fixed;
  // The preallocate suite: preallocate_step at the largest input before training.
  bool preallocate = false;
  // Forward and loss under autocast (bf16, fp16 with loss scaling); backward and step outside.
  Precision precision = Precision::fp32;
  // A model other than make_model(model, model_options), e.g. a ViT of other widths; `model`
  // then names the reference it is a variant of (its image size and classes apply).
  std::function<torch::nn::AnyModule()> build_model;
  // The optimizer and its implementation (the optimizer suite); SGD with momentum by default.
  OptimizerChoice optimizer;
  // Gradient accumulation: the batch split into this many equal micro-batches, a forward and a
  // backward each (loss divided by their number), then one optimizer step.
  std::int64_t micro_batches = 1;
  // The sync suite: the loss is added to a running sum on the device every step and read on the
  // host with .item() every loss_read_every steps (0: never); nullopt: the loss is not kept.
  std::optional<std::int64_t> loss_read_every;
  StepTensors step_tensors = StepTensors::staged;
  // The cuda_graphs suite: the whole step captured once as a CUDA graph and replayed (fixed
  // shapes, staged step tensors, fp32 or bf16, loss not read; anything else is invalid_argument).
  bool cuda_graph = false;
};

std::unique_ptr<Workload> make_training_workload(const SuiteContext& context, const TrainingSpec& spec);
const char* step_tensors_name(StepTensors where);  // "staged", "host", "device"
const char* input_shapes_name(InputShapes shapes);  // "fixed", "varying", "ascending"
// The pre-allocation step of the PyTorch Tuning Guide (TrainingSpec::preallocate): one forward and
// backward of `input` (the largest the run will see) in the model's current mode, no optimizer
// step, gradients set to None, and the module's buffers (BatchNorm's running statistics) put back:
// the caching allocator then holds blocks the size of that step, and the model is as it was.
void preallocate_step(torch::nn::AnyModule& model, const torch::Tensor& input, const torch::Tensor& labels,
                      Precision precision);

// The models a suite runs: the ones asked for, else the default for the device
// (small_cnn on CPU; resnet18 for --quick and resnet50 otherwise on CUDA).
std::vector<std::string> models_to_run(const SuiteContext& context);
// The batch size asked for, else a default per model and device.
std::int64_t batch_size_for(const SuiteContext& context, const std::string& model);
// Case parameters shared by the training suites: {{"model", m}, {"batch", b}}. A suite whose arms
// are slow on a CPU (16-bit float paths) passes quick_cpu_batch > 0: the batch of a --quick CPU
// run without --batch-size, which keeps the quick suite's budget small.
Levels training_params(const SuiteContext& context, const std::string& model, std::int64_t quick_cpu_batch = 0);
// The cases of a step-loop tip (sync, cuda_graphs): the training_params case and, on CUDA without
// --batch-size, also batch 8, where a step's kernels are shorter than the host needs to launch
// them (launch-bound), so host-side overheads show.
std::vector<Levels> step_loop_params(const SuiteContext& context, const std::string& model);
// The spec a training case describes (its model and batch parameters); arms then change one knob.
TrainingSpec training_spec(const CaseSpec& c);
// "cnn" or "vit" (from models::available_models()).
std::string model_family(const std::string& model);

}  // namespace tipbench::suites
