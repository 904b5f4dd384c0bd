// Internal to the models library: a TorchScript module as a torch::nn::Module, so the workloads
// train it like a reference model. Its parameters and buffers are the script's own tensors,
// registered by their dotted names with '/' for '.' (nn::Module names take no dots): to(device),
// channels_last and the optimizer change the script's tensors in place. clone() (DataParallel's
// replicas) loads a fresh copy from the same bytes and copies the current values into it.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <memory>
#include <string>

namespace tipbench::models {

class ScriptedModelImpl : public torch::nn::Cloneable<ScriptedModelImpl> {
 public:
  explicit ScriptedModelImpl(std::shared_ptr<const std::string> file_bytes);

  // Loads the script from the bytes and registers its tensors (Cloneable::clone calls it on a copy).
  void reset() override;
  // The logits: the script's output, or the first element of the tuple it returns.
  torch::Tensor forward(torch::Tensor images);
  // The script's training flag follows (BatchNorm, dropout inside it read it).
  void train(bool on = true) override;

 private:
  std::shared_ptr<const std::string> file_bytes_;
  torch::jit::Module script_;
};
TORCH_MODULE(ScriptedModel);

// The module a file's bytes hold, on the CPU (torch::jit::load; its errors propagate).
torch::jit::Module load_script(const std::string& file_bytes,
                               std::unordered_map<std::string, std::string>* extra_files = nullptr);

}  // namespace tipbench::models
