#include "preallocate/preallocate_step.h"

#include <torch/torch.h>

#include <vector>

namespace tipbench::suites {

void preallocate_step(torch::nn::AnyModule& model, const torch::Tensor& input, const torch::Tensor& labels,
                      Precision precision) {
  const auto module = model.ptr();
  std::vector<torch::Tensor> buffers;
  for (const auto& b : module->buffers()) buffers.push_back(b.clone());
  torch::Tensor loss;
  {
    AutocastScope autocast(input.device().type(), precision);
    loss = torch::nn::functional::cross_entropy(model.forward(input), labels);
  }
  loss.backward();
  module->zero_grad(/*set_to_none=*/true);
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (auto& b : module->buffers()) b.copy_(buffers[i++]);
}

}  // namespace tipbench::suites
