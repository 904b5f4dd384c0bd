// ResNet-18/34/50 exactly as torchvision builds them (v1.5: stride on the 3x3 conv), with the
// same parameter names (conv1.weight, layer1.0.downsample.0.weight, fc.bias, ...). Example:
//   tipbench::models::ResNet net(tipbench::models::ResNetOptions::resnet50());
//   auto y = net->forward(x);   // or stem(), stages()[i]->forward(), head() for per-stage work
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <vector>

namespace tipbench::models {

struct ResNetOptions {
  bool bottleneck = false;  // BasicBlock (18/34) or Bottleneck (50)
  std::array<int64_t, 4> blocks_per_stage = {2, 2, 2, 2};
  int64_t num_classes = 1000;
  bool conv_bias_before_bn = false;  // torchvision: false
  bool inplace_relu = true;          // torchvision: nn.ReLU(inplace=True)

  static ResNetOptions resnet18() { return {false, {2, 2, 2, 2}}; }
  static ResNetOptions resnet34() { return {false, {3, 4, 6, 3}}; }
  static ResNetOptions resnet50() { return {true, {3, 4, 6, 3}}; }
};

// conv3x3 -> BN -> ReLU -> conv3x3 -> BN, plus the (downsampled) input, then ReLU.
class BasicBlockImpl : public torch::nn::Cloneable<BasicBlockImpl> {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlockImpl(int64_t in_channels, int64_t planes, int64_t stride, bool conv_bias, bool inplace_relu = true);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};  // empty unless the shape changes

 private:
  int64_t in_channels_, planes_, stride_;
  bool conv_bias_, inplace_relu_;
};
TORCH_MODULE(BasicBlock);

// conv1x1 -> BN -> ReLU -> conv3x3 (stride) -> BN -> ReLU -> conv1x1 (x4) -> BN, + input, ReLU.
class BottleneckImpl : public torch::nn::Cloneable<BottleneckImpl> {
 public:
  static constexpr int64_t kExpansion = 4;
  BottleneckImpl(int64_t in_channels, int64_t planes, int64_t stride, bool conv_bias, bool inplace_relu = true);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};

 private:
  int64_t in_channels_, planes_, stride_;
  bool conv_bias_, inplace_relu_;
};
TORCH_MODULE(Bottleneck);

class ResNetImpl : public torch::nn::Cloneable<ResNetImpl> {
 public:
  explicit ResNetImpl(ResNetOptions options = ResNetOptions::resnet18());
  void reset() override;
  torch::Tensor forward(torch::Tensor x);  // head(layer4(...layer1(stem(x))))

  // The pieces of forward(), for per-stage work such as activation checkpointing.
  torch::Tensor stem(torch::Tensor x);                // conv1, bn1, ReLU, max-pool
  std::vector<torch::nn::Sequential> stages() const;  // layer1..layer4, in order
  torch::Tensor head(torch::Tensor x);                // global average pool, flatten, fc

  const ResNetOptions& options() const { return options_; }

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::Linear fc{nullptr};

 private:
  ResNetOptions options_;
};
TORCH_MODULE(ResNet);

}  // namespace tipbench::models
