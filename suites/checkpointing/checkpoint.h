// Activation checkpointing in C++ (LibTorch has no torch.utils.checkpoint): a segment of the
// network runs without saving its activations, and backward recomputes it. Example:
//   auto y = checkpoint([&](const torch::Tensor& x) { return stage->forward(x); }, x, stage->parameters());
//
// What the recompute keeps equal to the forward:
// - RNG: the CPU generator's state (and the CUDA generator of the input's device) is saved
//   before the forward and restored around the recompute, so dropout draws the same mask; the
//   generators are put back afterwards, so code after backward sees the RNG it would without
//   checkpointing.
// - Autocast: the forward's enabled flags and dtypes (CPU and CUDA) are re-applied during the
//   recompute, with the autocast cache cleared when it ends.
// - Gradients reach the segment's parameters even when `x` does not require grad (a segment
//   fed raw images): the parameters are inputs of the autograd node, so autograd builds the
//   node whenever any of them requires grad, and backward returns their gradients.
// Known difference (as in PyTorch's own checkpoint): BatchNorm running statistics in a
// checkpointed segment are updated twice per step (forward and recompute).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace tipbench::suites {

using SegmentFn = std::function<at::Tensor(const at::Tensor&)>;

// Returns fn(x). With grad mode off it is a plain call. `params` are the tensors fn reads
// besides x that need gradients (the segment's parameters).
at::Tensor checkpoint(SegmentFn fn, const at::Tensor& x, const std::vector<at::Tensor>& params);

}  // namespace tipbench::suites
