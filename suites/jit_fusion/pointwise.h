// The pointwise blocks of transformer training code that JIT fusion targets, each in the three
// forms the jit_fusion suite and micro-benchmark compare:
//   eager       hand-written in ATen ops, one kernel per op (as the blocks are usually written)
//   torchscript the same expression compiled by TorchScript (its fuser may merge the kernels)
//   native      ATen's own fused op, where one exists (at::gelu, at::layer_norm)
// Example:
//   auto in = make_pointwise_inputs(PointwiseBlock::bias_gelu, 1024, 3072, device, /*requires_grad=*/true);
//   torch::Tensor y = pointwise_eager(PointwiseBlock::bias_gelu, in);
//   ScriptFunction f(pointwise_script(PointwiseBlock::bias_gelu), "f");  y = f(pointwise_script_args(...));
#pragma once

#include <ATen/core/ivalue.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

enum class PointwiseBlock {
  gelu,                   // x * 0.5 * (1 + erf(x / 1.41421))
  bias_gelu,              // the same on x + bias (a Linear's bias, added after a bias-free matmul)
  bias_dropout_residual,  // residual + dropout(x + bias)
  layer_norm,             // (x - mean) / sqrt(var + eps) * weight + bias over the last dimension
};

// In declaration order; names as above.
const std::vector<PointwiseBlock>& all_pointwise_blocks();
std::string to_string(PointwiseBlock block);
// Throws std::invalid_argument listing the valid names.
PointwiseBlock pointwise_block_from(const std::string& name);

struct PointwiseInputs {
  at::Tensor x;         // [rows, cols]
  at::Tensor bias;      // [cols]
  at::Tensor residual;  // [rows, cols]
  at::Tensor weight;    // [cols] (layer norm)
  double dropout_p = 0.1;
  bool training = true;  // dropout active
  // The tensors the block reads, for gradients (each requires grad when made so).
  std::vector<at::Tensor> differentiable() const;
};

// Random inputs from the current torch seed.
PointwiseInputs make_pointwise_inputs(PointwiseBlock block, std::int64_t rows, std::int64_t cols,
                                      const c10::Device& device, bool requires_grad);

at::Tensor pointwise_eager(PointwiseBlock block, const PointwiseInputs& in);
// TorchScript source defining `f`, and its arguments for these inputs.
std::string pointwise_script(PointwiseBlock block);
std::vector<c10::IValue> pointwise_script_args(PointwiseBlock block, const PointwiseInputs& in);
// nullopt when ATen has no fused op for the block; else why not.
std::optional<std::string> pointwise_native_missing(PointwiseBlock block);
// Throws std::logic_error for a block without a native op.
at::Tensor pointwise_native(PointwiseBlock block, const PointwiseInputs& in);

}  // namespace tipbench::suites
