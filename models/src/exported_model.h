// Internal to the models library: a .pt2 archive's programs as a torch::nn::Module, so the
// workloads train it like a reference model (the .pt2 counterpart of scripted_model.h). Its
// parameters and buffers are fresh copies of the archive's, registered by their dotted names with
// '/' for '.', the lifted constants as buffers under "constant/": to(device), channels_last and the
// optimizer act on the tensors the programs read. forward runs the train program in train mode
// and the eval program in eval mode.
#pragma once

#include "exported_program.h"

#include <torch/torch.h>

#include <memory>

namespace tipbench::models {

class ExportedModelImpl : public torch::nn::Cloneable<ExportedModelImpl> {
 public:
  explicit ExportedModelImpl(std::shared_ptr<const ExportedArchive> archive);

  // Registers fresh copies of the archive's tensors (Cloneable::clone calls it on a copy).
  void reset() override;
  // The logits: the mode's program's first output.
  torch::Tensor forward(torch::Tensor images);

 private:
  std::shared_ptr<const ExportedArchive> archive_;  // shared, never changed: the programs and stored tensors
  std::vector<torch::Tensor> state_;                // this module's tensors, in the archive's order
};
TORCH_MODULE(ExportedModel);

}  // namespace tipbench::models
