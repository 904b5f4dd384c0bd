#include "tipbench/models/small_cnn.h"

namespace tipbench::models {

namespace nn = torch::nn;

ConvBNReLUImpl::ConvBNReLUImpl(int64_t in_channels, int64_t out_channels, bool conv_bias, bool inplace_relu)
    : in_channels_(in_channels), out_channels_(out_channels), conv_bias_(conv_bias), inplace_relu_(inplace_relu) {
  reset();
}

void ConvBNReLUImpl::reset() {
  conv = register_module(
      "conv",
      nn::Conv2d(
          nn::Conv2dOptions(in_channels_, out_channels_, /*kernel_size=*/3).stride(2).padding(1).bias(conv_bias_)));
  bn = register_module("bn", nn::BatchNorm2d(out_channels_));
  torch::NoGradGuard no_grad;
  nn::init::kaiming_normal_(conv->weight, /*a=*/0, torch::kFanOut, torch::kReLU);
}

torch::Tensor ConvBNReLUImpl::forward(torch::Tensor x) {
  auto y = bn(conv(x));
  return inplace_relu_ ? y.relu_() : torch::relu(y);
}

SmallCNNImpl::SmallCNNImpl(SmallCNNOptions options) : options_(std::move(options)) {
  TORCH_CHECK(!options_.channels.empty(), "SmallCNN needs at least one stage");
  reset();
}

void SmallCNNImpl::reset() {
  features = nn::Sequential();
  int64_t in_channels = 3;
  for (int64_t out_channels : options_.channels) {
    features->push_back(ConvBNReLU(in_channels, out_channels, options_.conv_bias_before_bn, options_.inplace_relu));
    in_channels = out_channels;
  }
  register_module("features", features);
  fc = register_module("fc", nn::Linear(in_channels, options_.num_classes));
}

std::vector<ConvBNReLU> SmallCNNImpl::stages() const {
  std::vector<ConvBNReLU> out;
  for (const auto& m : features->children()) {
    out.emplace_back(std::dynamic_pointer_cast<ConvBNReLUImpl>(m));
  }
  return out;
}

torch::Tensor SmallCNNImpl::head(torch::Tensor x) { return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1)); }

torch::Tensor SmallCNNImpl::forward(torch::Tensor x) { return head(features->forward(std::move(x))); }

}  // namespace tipbench::models
