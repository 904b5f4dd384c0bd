// Which ops a .pt2 graph may call. A model file is input from elsewhere (docs/security.md): the
// runner calls each node's op through c10::Dispatcher, and the dispatcher holds ops that touch the
// world outside the tensors (aten::from_file maps any file writable, c10d's send data over the
// network). A graph may call ATen's compute ops only: those PyTorch tags `core` (the Core ATen IR
// of torch.export's run_decompositions, native_functions.yaml) and the composite ops the training
// IR keeps undecomposed (conv2d, linear, batch_norm, scaled_dot_product_attention, ...), each with
// its in-place form (relu_, add_). Ops of another namespace only when the user names them.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <string>
#include <vector>

namespace tipbench::models {

// "" when the graph may call `op`, else the refusal's words (naming the op and what to do).
// `named` are the user's --allow-op entries: "NS::NAME" or "NS::*".
std::string op_refusal(const c10::OperatorName& op, const std::vector<std::string>& named);

// The same for an op the dispatcher holds: also checks its tags.
std::string op_refusal(const c10::OperatorHandle& op, const std::vector<std::string>& named);

// The composite ATen compute ops allowed beside the core-tagged ones (tests check each exists).
const std::vector<std::string>& composite_compute_ops();

// Whether `entry` is an --allow-op entry: NS::NAME or NS::* of identifier characters.
bool is_op_pattern(const std::string& entry);

}  // namespace tipbench::models
