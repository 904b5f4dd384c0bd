// Internal to the models library: the entries make_model() builds from, and the one way to add
// one at run time (a model file registers itself: model_file.cpp).
#pragma once

#include "tipbench/models/model.h"

#include <functional>

namespace tipbench::models {

struct ModelEntry {
  ModelInfo info;
  // Called with options whose num_classes is resolved (never 0).
  std::function<torch::nn::AnyModule(const ModelOptions&, int64_t image_size)> make;
};

// Appends an entry; throws std::invalid_argument when its name is taken.
void register_model(ModelEntry entry);

}  // namespace tipbench::models
