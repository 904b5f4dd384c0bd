#include "tipbench/models/resnet.h"

#include <string>

namespace tipbench::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride, bool bias) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, /*kernel_size=*/3).stride(stride).padding(1).bias(bias));
}

nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride, bool bias) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, /*kernel_size=*/1).stride(stride).bias(bias));
}

// torchvision's _make_layer: a 1x1 conv + BN on the shortcut when the shape changes.
nn::Sequential make_downsample(int64_t in, int64_t out, int64_t stride, bool bias) {
  if (stride == 1 && in == out) return nullptr;
  return nn::Sequential(conv1x1(in, out, stride, bias), nn::BatchNorm2d(out));
}

template <typename Block>
nn::Sequential make_stage(int64_t& in_channels, int64_t planes, int64_t blocks, int64_t stride, bool bias,
                          bool inplace_relu) {
  nn::Sequential stage;
  for (int64_t i = 0; i < blocks; ++i) {
    stage->push_back(Block(in_channels, planes, i == 0 ? stride : 1, bias, inplace_relu));
    in_channels = planes * Block::ContainedType::kExpansion;
  }
  return stage;
}

// nn.ReLU(inplace): overwrite x (no new tensor; ReLU's backward reads its output, which is x
// now) or return a new one.
torch::Tensor relu(torch::Tensor x, bool inplace) { return inplace ? x.relu_() : torch::relu(x); }

}  // namespace

// ---------------------------------------------------------------------------------------------
BasicBlockImpl::BasicBlockImpl(int64_t in_channels, int64_t planes, int64_t stride, bool conv_bias, bool inplace_relu)
    : in_channels_(in_channels), planes_(planes), stride_(stride), conv_bias_(conv_bias), inplace_relu_(inplace_relu) {
  reset();
}

void BasicBlockImpl::reset() {
  conv1 = register_module("conv1", conv3x3(in_channels_, planes_, stride_, conv_bias_));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes_));
  conv2 = register_module("conv2", conv3x3(planes_, planes_, 1, conv_bias_));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes_));
  downsample = make_downsample(in_channels_, planes_ * kExpansion, stride_, conv_bias_);
  if (downsample) register_module("downsample", downsample);
}

torch::Tensor BasicBlockImpl::forward(torch::Tensor x) {
  auto identity = downsample ? downsample->forward(x) : x;
  auto out = relu(bn1(conv1(x)), inplace_relu_);
  out = bn2(conv2(out));
  return relu(out + identity, inplace_relu_);
}

// ---------------------------------------------------------------------------------------------
BottleneckImpl::BottleneckImpl(int64_t in_channels, int64_t planes, int64_t stride, bool conv_bias, bool inplace_relu)
    : in_channels_(in_channels), planes_(planes), stride_(stride), conv_bias_(conv_bias), inplace_relu_(inplace_relu) {
  reset();
}

void BottleneckImpl::reset() {
  const int64_t width = planes_;  // groups = 1, base_width = 64
  conv1 = register_module("conv1", conv1x1(in_channels_, width, 1, conv_bias_));
  bn1 = register_module("bn1", nn::BatchNorm2d(width));
  conv2 = register_module("conv2", conv3x3(width, width, stride_, conv_bias_));  // v1.5
  bn2 = register_module("bn2", nn::BatchNorm2d(width));
  conv3 = register_module("conv3", conv1x1(width, planes_ * kExpansion, 1, conv_bias_));
  bn3 = register_module("bn3", nn::BatchNorm2d(planes_ * kExpansion));
  downsample = make_downsample(in_channels_, planes_ * kExpansion, stride_, conv_bias_);
  if (downsample) register_module("downsample", downsample);
}

torch::Tensor BottleneckImpl::forward(torch::Tensor x) {
  auto identity = downsample ? downsample->forward(x) : x;
  auto out = relu(bn1(conv1(x)), inplace_relu_);
  out = relu(bn2(conv2(out)), inplace_relu_);
  out = bn3(conv3(out));
  return relu(out + identity, inplace_relu_);
}

// ---------------------------------------------------------------------------------------------
ResNetImpl::ResNetImpl(ResNetOptions options) : options_(options) { reset(); }

void ResNetImpl::reset() {
  const bool bias = options_.conv_bias_before_bn;
  conv1 =
      register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 64, /*kernel_size=*/7).stride(2).padding(3).bias(bias)));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));

  int64_t in_channels = 64;
  const auto& n = options_.blocks_per_stage;
  auto stage = [&](int64_t planes, int64_t blocks, int64_t stride) {
    const bool inplace = options_.inplace_relu;
    return options_.bottleneck ? make_stage<Bottleneck>(in_channels, planes, blocks, stride, bias, inplace)
                               : make_stage<BasicBlock>(in_channels, planes, blocks, stride, bias, inplace);
  };
  layer1 = register_module("layer1", stage(64, n[0], 1));
  layer2 = register_module("layer2", stage(128, n[1], 2));
  layer3 = register_module("layer3", stage(256, n[2], 2));
  layer4 = register_module("layer4", stage(512, n[3], 2));
  fc = register_module("fc", nn::Linear(in_channels, options_.num_classes));

  // torchvision: kaiming_normal_(fan_out, relu) for convs; BN weight 1, bias 0 (the LibTorch
  // default); Linear and conv biases keep the default uniform init.
  torch::NoGradGuard no_grad;
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, /*a=*/0, torch::kFanOut, torch::kReLU);
    }
  }
}

torch::Tensor ResNetImpl::stem(torch::Tensor x) {
  x = relu(bn1(conv1(x)), options_.inplace_relu);
  return torch::max_pool2d(x, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
}

std::vector<nn::Sequential> ResNetImpl::stages() const { return {layer1, layer2, layer3, layer4}; }

torch::Tensor ResNetImpl::head(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc(x);
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  x = stem(std::move(x));
  for (auto& stage : stages()) x = stage->forward(x);
  return head(std::move(x));
}

}  // namespace tipbench::models
