#include "pointwise.h"

#include <torch/torch.h>

#include <stdexcept>

namespace tipbench::suites {

namespace {

constexpr double kLayerNormEps = 1e-5;

torch::Tensor gelu_erf(const torch::Tensor& x) { return x * 0.5 * (1.0 + torch::erf(x / 1.41421)); }

}  // namespace

const std::vector<PointwiseBlock>& all_pointwise_blocks() {
  static const std::vector<PointwiseBlock> blocks{PointwiseBlock::gelu, PointwiseBlock::bias_gelu,
                                                  PointwiseBlock::bias_dropout_residual, PointwiseBlock::layer_norm};
  return blocks;
}

std::string to_string(PointwiseBlock block) {
  switch (block) {
    case PointwiseBlock::gelu: return "gelu";
    case PointwiseBlock::bias_gelu: return "bias_gelu";
    case PointwiseBlock::bias_dropout_residual: return "bias_dropout_residual";
    case PointwiseBlock::layer_norm: return "layer_norm";
  }
  throw std::logic_error("unknown pointwise block");
}

PointwiseBlock pointwise_block_from(const std::string& name) {
  std::string valid;
  for (auto block : all_pointwise_blocks()) {
    if (to_string(block) == name) return block;
    valid += (valid.empty() ? "" : ", ") + to_string(block);
  }
  throw std::invalid_argument("unknown pointwise block '" + name + "'; valid: " + valid);
}

std::vector<at::Tensor> PointwiseInputs::differentiable() const {
  std::vector<at::Tensor> out;
  for (const auto& t : {x, bias, residual, weight}) {
    if (t.defined() && t.requires_grad()) out.push_back(t);
  }
  return out;
}

PointwiseInputs make_pointwise_inputs(PointwiseBlock block, std::int64_t rows, std::int64_t cols,
                                      const c10::Device& device, bool requires_grad) {
  const auto options = torch::TensorOptions().device(device).requires_grad(requires_grad);
  PointwiseInputs in;
  in.x = torch::randn({rows, cols}, options);
  if (block != PointwiseBlock::gelu) in.bias = torch::randn({cols}, options);
  if (block == PointwiseBlock::bias_dropout_residual) in.residual = torch::randn({rows, cols}, options);
  if (block == PointwiseBlock::layer_norm) in.weight = torch::randn({cols}, options);
  return in;
}

torch::Tensor pointwise_eager(PointwiseBlock block, const PointwiseInputs& in) {
  switch (block) {
    case PointwiseBlock::gelu: return gelu_erf(in.x);
    case PointwiseBlock::bias_gelu: return gelu_erf(in.x + in.bias);
    case PointwiseBlock::bias_dropout_residual:
      return in.residual + torch::dropout(in.x + in.bias, in.dropout_p, in.training);
    case PointwiseBlock::layer_norm: {
      auto mean = in.x.mean(-1, /*keepdim=*/true);
      auto centered = in.x - mean;
      auto var = (centered * centered).mean(-1, /*keepdim=*/true);
      return centered * torch::rsqrt(var + kLayerNormEps) * in.weight + in.bias;
    }
  }
  throw std::logic_error("unknown pointwise block");
}

// The same expressions as pointwise_eager, in TorchScript.
std::string pointwise_script(PointwiseBlock block) {
  switch (block) {
    case PointwiseBlock::gelu:
      return "def f(x):\n"
             "    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))\n";
    case PointwiseBlock::bias_gelu:
      return "def f(x, bias):\n"
             "    y = x + bias\n"
             "    return y * 0.5 * (1.0 + torch.erf(y / 1.41421))\n";
    case PointwiseBlock::bias_dropout_residual:
      return "def f(x, bias, residual, p: float, training: bool):\n"
             "    return residual + torch.dropout(x + bias, p, training)\n";
    case PointwiseBlock::layer_norm:
      return "def f(x, weight, bias, eps: float):\n"
             "    mean = x.mean(-1, keepdim=True)\n"
             "    centered = x - mean\n"
             "    var = (centered * centered).mean(-1, keepdim=True)\n"
             "    return centered * torch.rsqrt(var + eps) * weight + bias\n";
  }
  throw std::logic_error("unknown pointwise block");
}

std::vector<c10::IValue> pointwise_script_args(PointwiseBlock block, const PointwiseInputs& in) {
  switch (block) {
    case PointwiseBlock::gelu: return {in.x};
    case PointwiseBlock::bias_gelu: return {in.x, in.bias};
    case PointwiseBlock::bias_dropout_residual: return {in.x, in.bias, in.residual, in.dropout_p, in.training};
    case PointwiseBlock::layer_norm: return {in.x, in.weight, in.bias, kLayerNormEps};
  }
  throw std::logic_error("unknown pointwise block");
}

std::optional<std::string> pointwise_native_missing(PointwiseBlock block) {
  if (block == PointwiseBlock::bias_dropout_residual) {
    return "ATen has no fused bias + dropout + residual-add op";
  }
  return std::nullopt;
}

torch::Tensor pointwise_native(PointwiseBlock block, const PointwiseInputs& in) {
  switch (block) {
    case PointwiseBlock::gelu: return torch::gelu(in.x);
    case PointwiseBlock::bias_gelu: return torch::gelu(in.x + in.bias);
    case PointwiseBlock::layer_norm: return torch::layer_norm(in.x, {in.x.size(-1)}, in.weight, in.bias, kLayerNormEps);
    case PointwiseBlock::bias_dropout_residual: break;
  }
  throw std::logic_error(to_string(block) + ": " + pointwise_native_missing(block).value_or("no native op"));
}

}  // namespace tipbench::suites
