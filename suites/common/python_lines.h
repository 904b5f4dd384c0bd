// A tip's lines in a plain PyTorch training script, by where they go: recipe.h's ingredients
// declare them, recipe_script.h writes them into recipe.py, and the Python worker applies a
// recipe's (python_step.h's python_recipe arm).
#pragma once

#include <string>
#include <vector>

namespace tipbench::suites {

// The ingredient's part of a plain PyTorch training script (recipe_script.h puts the parts into
// one script; a test runs it in the project's Python).
struct PythonLines {
  std::vector<std::string> setup;             // before the model is built: backend flags, environment
  std::vector<std::string> model_kwargs;      // the model's own code: make_model(conv_bias=False)
  std::vector<std::string> model;             // after the model is built: model = model.to(...)
  std::vector<std::string> optimizer_kwargs;  // torch.optim.SGD(..., fused=True)
  std::vector<std::string> batch;             // per batch, on the device: images = images.to(...)
  std::string autocast_dtype;                 // "torch.bfloat16": forward and loss under autocast
  bool grad_scaler = false;                   // torch.amp.GradScaler enabled
  std::string eval_context;                   // evaluation under this instead of torch.no_grad()
  std::vector<std::string> comments;          // what the lines stand for in a user's own model
};

}  // namespace tipbench::suites
