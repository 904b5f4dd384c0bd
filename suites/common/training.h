// The workload most tips are measured on: supervised training of a reference image classifier on
// synthetic inputs staged on the device (data loading is its own suite). A suite states what its
// arm changes; everything else is the same for every arm. Example:
//   TrainingSpec spec{.model = "resnet50", .batch_size = 64};
//   spec.set_to_none = false;                       // the zero_grad suite's "zero" arm
//   auto workload = make_training_workload(context, spec);
#pragma once

#include "tipbench/models/model.h"
#include "tipbench/suite.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tipbench::suites {

enum class InputShapes {
  fixed,    // every step the same (batch, 3, size, size)
  varying,  // warm-up at the fixed shape, then a shape not seen before at every timed step
};

struct TrainingSpec {
  std::string model;
  std::int64_t batch_size = 0;
  models::ModelOptions model_options;
  bool set_to_none = true;  // optimizer.zero_grad(set_to_none): LibTorch's default is true
  InputShapes shapes = InputShapes::fixed;
};

std::unique_ptr<Workload> make_training_workload(const SuiteContext& context, const TrainingSpec& spec);

// The models a suite runs: the ones asked for, else the default for the device
// (small_cnn on CPU; resnet18 for --quick and resnet50 otherwise on CUDA).
std::vector<std::string> models_to_run(const SuiteContext& context);
// The batch size asked for, else a default per model and device.
std::int64_t batch_size_for(const SuiteContext& context, const std::string& model);
// Case parameters shared by the training suites: {{"model", m}, {"batch", b}}.
Levels training_params(const SuiteContext& context, const std::string& model);
// The spec a training case describes (its model and batch parameters); arms then change one knob.
TrainingSpec training_spec(const CaseSpec& c);
// "cnn" or "vit" (from models::available_models()).
std::string model_family(const std::string& model);

}  // namespace tipbench::suites
