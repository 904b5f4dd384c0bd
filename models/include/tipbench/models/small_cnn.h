// A small conv-BN-ReLU network for quick CPU runs on 32x32 inputs (CIFAR-sized): four stride-2
// 3x3 stages (32, 64, 128, 256 channels), global average pool, linear head; ~0.39 M parameters.
// Example:
//   tipbench::models::SmallCNN net(tipbench::models::SmallCNNOptions{.num_classes = 10});
//   auto y = net->forward(torch::randn({32, 3, 32, 32}));   // [32, 10]
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace tipbench::models {

struct SmallCNNOptions {
  int64_t num_classes = 10;
  bool conv_bias_before_bn = false;
  bool inplace_relu = true;  // ReLU overwrites the BatchNorm output instead of making a new tensor
  std::vector<int64_t> channels = {32, 64, 128, 256};  // one stride-2 stage each
};

// conv3x3 (stride 2) -> BatchNorm -> ReLU; parameter names conv.weight, bn.weight, ...
class ConvBNReLUImpl : public torch::nn::Cloneable<ConvBNReLUImpl> {
 public:
  ConvBNReLUImpl(int64_t in_channels, int64_t out_channels, bool conv_bias, bool inplace_relu = true);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};

 private:
  int64_t in_channels_, out_channels_;
  bool conv_bias_, inplace_relu_;
};
TORCH_MODULE(ConvBNReLU);

class SmallCNNImpl : public torch::nn::Cloneable<SmallCNNImpl> {
 public:
  explicit SmallCNNImpl(SmallCNNOptions options = {});
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

  std::vector<ConvBNReLU> stages() const;  // features.0, features.1, ... in order
  torch::Tensor head(torch::Tensor x);     // global average pool, flatten, fc

  const SmallCNNOptions& options() const { return options_; }

  torch::nn::Sequential features{nullptr};
  torch::nn::Linear fc{nullptr};

 private:
  SmallCNNOptions options_;
};
TORCH_MODULE(SmallCNN);

}  // namespace tipbench::models
