#include "allowed_ops.h"

#include <ATen/core/enum_tag.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>

namespace tipbench::models {

namespace {

// Composite ops (CompositeImplicitAutograd) that torch.export's training IR keeps as they were
// called, with no core tag of their own: what the reference CNNs and ViTs and common layers emit.
// None reads or writes anything but its tensors.
const std::set<std::string>& composite_set() {
  static const std::set<std::string> ops = [] {
    const auto& list = composite_compute_ops();
    return std::set<std::string>(list.begin(), list.end());
  }();
  return ops;
}

// Ops refused by name whatever their tags: each reads or writes outside its tensors.
const std::set<std::string>& refused_by_name() {
  static const std::set<std::string> ops = {"from_file", "_print", "save", "load", "set_", "set"};
  return ops;
}

std::string qualified(const c10::OperatorName& op) {
  return op.overload_name.empty() ? op.name : op.name + "." + op.overload_name;
}

bool named_by_user(const std::string& ns, const std::string& name, const std::vector<std::string>& named) {
  return std::any_of(named.begin(), named.end(),
                     [&](const std::string& e) { return e == ns + "::" + name || e == ns + "::*"; });
}

std::string how_to_allow(const c10::OperatorName& op) {
  return fmt::format("(allow it with --allow-op {} only for a file you trust: docs/security.md)", op.name);
}

// The functional op of an in-place one (relu_ -> relu, add_.Tensor -> add.Tensor), if `name` is one.
std::optional<c10::OperatorHandle> functional_of(const c10::OperatorName& op) {
  const auto sep = op.name.find("::");
  const std::string base = op.name.substr(sep + 2);
  if (base.size() < 2 || base.back() != '_' || base.rfind("__", 0) == 0) return std::nullopt;
  return c10::Dispatcher::singleton().findOp({op.name.substr(0, op.name.size() - 1), op.overload_name});
}

bool compute_op(const c10::OperatorHandle& op) {
  const std::string base = op.operator_name().name.substr(6);  // after "aten::"
  return op.hasTag(at::Tag::core) || composite_set().count(base) > 0;
}

}  // namespace

const std::vector<std::string>& composite_compute_ops() {
  static const std::vector<std::string> ops = {
      // layers
      "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "linear", "bilinear",
      "matmul", "einsum", "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "dropout",
      "alpha_dropout", "feature_dropout", "feature_alpha_dropout", "scaled_dot_product_attention", "embedding",
      // pooling and resampling
      "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
      "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "pad", "pixel_shuffle", "pixel_unshuffle",
      "channel_shuffle", "upsample_nearest2d", "upsample_bilinear2d",
      // activations and elementwise
      "relu6", "hardtanh", "silu", "hardswish", "hardsigmoid", "mish", "elu", "selu", "celu", "leaky_relu", "softplus",
      "prelu", "log_sigmoid", "glu", "softmax", "log_softmax", "square", "clamp_min", "clamp_max", "masked_fill",
      "type_as", "to",
      // shapes and views
      "contiguous", "reshape", "reshape_as", "view_as", "expand_as", "flatten", "unflatten", "chunk", "split", "unbind",
      "tensor_split", "t", "transpose", "swapaxes", "movedim", "narrow", "stack", "hstack", "vstack", "concat",
      "concatenate", "repeat", "tile", "flip", "roll", "squeeze", "unsqueeze", "alias", "detach", "lift_fresh_copy",
      // reductions
      "sum", "mean", "var", "std", "var_mean", "norm", "linalg_vector_norm", "cumsum",
      // tensors made in the graph
      "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "new_zeros", "new_ones",
      "new_full", "new_empty", "arange", "zeros", "ones", "full",
      // sizes and the export's own checks (they raise; they touch nothing)
      "sym_size", "sym_numel", "sym_stride", "sym_storage_offset", "_assert_tensor_metadata", "_assert_scalar",
      "sym_constrain_range_for_size"};
  return ops;
}

bool is_op_pattern(const std::string& entry) {
  static const std::regex pattern(R"([A-Za-z_][A-Za-z0-9_]*::([A-Za-z_][A-Za-z0-9_]*|\*))");
  return std::regex_match(entry, pattern);
}

std::string op_refusal(const c10::OperatorName& op, const std::vector<std::string>& named) {
  const auto sep = op.name.find("::");
  const std::string ns = sep == std::string::npos ? "" : op.name.substr(0, sep);
  const std::string name = sep == std::string::npos ? op.name : op.name.substr(sep + 2);
  if (named_by_user(ns, name, named)) return "";
  if (ns == "aten" && refused_by_name().count(name) > 0) {
    return fmt::format("it calls {}, which reaches outside its tensors (files, the console) {}", qualified(op),
                       how_to_allow(op));
  }
  if (ns != "aten") {
    return fmt::format("it calls {}, an op outside ATen's compute ops: a .pt2 graph may call ATen compute ops only {}",
                       qualified(op), how_to_allow(op));
  }
  return "";
}

std::string op_refusal(const c10::OperatorHandle& op, const std::vector<std::string>& named) {
  const auto& name = op.operator_name();
  if (auto why = op_refusal(name, named); !why.empty()) return why;
  const auto sep = name.name.find("::");
  if (named_by_user(name.name.substr(0, sep), name.name.substr(sep + 2), named)) return "";
  if (compute_op(op)) return "";
  if (auto functional = functional_of(name); functional && compute_op(*functional)) return "";
  return fmt::format(
      "it calls {}, which is not on tipbench's list of ATen compute ops (core ATen and the layers of "
      "the training IR) {}",
      qualified(name), how_to_allow(name));
}

}  // namespace tipbench::models
