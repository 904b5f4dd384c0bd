// Tip: fuse pointwise ops (GELU, bias + GELU, bias + dropout + residual, layer norm): written as
// separate ATen ops, each one reads and writes the whole tensor; a fuser (TorchScript's NNC) or
// a native fused op (at::gelu, at::layer_norm) does it in one pass. Arms:
//   eager        the hand-written expression, one kernel per op (baseline: PyTorch's default)
//   torchscript  the same expression compiled with torch::jit::compile, the fuser in its default
//                state; whether it fused is read from the optimized graph and recorded, never
//                assumed (CPU fusion needs NNC's LLVM backend, and TorchScript leaves it off;
//                on a GPU torch 2.11 fuses only without grad, so these training arms run
//                unfused there: seen on an H100, fusion_diagnosis says why)
//   native       ATen's fused op where one exists
// Two kinds of case: one pointwise block alone (forward + backward, autograd::grad), and the
// macro case: ViT training with every encoder block's MLP pointwise ops in the arm's form.
#include "jit_fusion/pointwise.h"
#include "jit_fusion/torchscript.h"
#include "common/training.h"
#include "tipbench/models/model.h"
#include "tipbench/models/vit.h"
#include "tipbench/suite/registry.h"
#include "common/optimizers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

namespace tipbench::suites {

namespace {

namespace F = torch::nn::functional;

constexpr double kDropout = 0.1;  // ViT's MLP and residual dropout in the macro case (ViT paper's)

// Adds the fusion outcome of a TorchScript function to an arm's info under `prefix`.
void record_fusion(nlohmann::json& info, const std::string& prefix, const FusionReport& r, const c10::Device& device) {
  info[prefix + "fusion"] = r.status();
  info[prefix + "fusion_groups"] = r.fusion_groups;
  info[prefix + "fused_ops"] = r.fused_ops;
  if (!r.fused()) info["fusion_diagnosis"] = device.is_cuda() ? gpu_fusion_diagnosis(device) : cpu_fusion_diagnosis();
}

// The model's options (torchvision's ViT-Ti/S/B-16 layout and init) at this image size and depth.
models::ViTOptions vit_options(const std::string& model, std::int64_t image_size, std::int64_t layers) {
  models::ViTOptions o = models::ViTOptions::of(model);
  o.image_size = image_size;
  o.num_layers = layers;
  o.dropout = kDropout;
  o.num_classes = models::resolved_num_classes(model, {});
  return o;
}

// One pointwise block, forward and backward, on inputs staged once.
class PointwiseWorkload final : public Workload {
 public:
  PointwiseWorkload(const SuiteContext& context, PointwiseBlock block, const std::string& impl, std::int64_t rows,
                    std::int64_t cols)
      : block_(block),
        impl_(impl),
        rows_(rows),
        device_(context.device),
        in_(make_pointwise_inputs(block, rows, cols, context.device, /*requires_grad=*/true)) {
    grad_out_ = torch::randn({rows, cols}, torch::TensorOptions().device(device_));
    info_ = {{"block", to_string(block)},
             {"impl", impl},
             {"shape", {rows, cols}},
             {"dtype", "float32"},
             {"step", "forward + backward (autograd::grad)"}};
    if (impl == "torchscript") {
      script_.emplace(pointwise_script(block), "f");
      const FusionReport r = script_->warm_up(pointwise_script_args(block, in_));
      record_fusion(info_, "", r, device_);
      info_["optimized_graph"] = r.graph;
    }
  }

  void step() override {
    torch::Tensor out;
    if (impl_ == "eager") {
      out = pointwise_eager(block_, in_);
    } else if (impl_ == "torchscript") {
      out = (*script_)(pointwise_script_args(block_, in_));
    } else {
      out = pointwise_native(block_, in_);
    }
    torch::autograd::grad({out}, in_.differentiable(), {grad_out_});
  }

  std::int64_t samples_per_step() const override { return rows_; }
  nlohmann::json info() const override { return info_; }

 private:
  PointwiseBlock block_;
  std::string impl_;
  std::int64_t rows_;
  c10::Device device_;
  PointwiseInputs in_;
  torch::Tensor grad_out_;
  std::optional<ScriptFunction> script_;
  nlohmann::json info_;
};

// ViT training; in the eager and torchscript arms every encoder block runs its MLP as a bias-free
// matmul + bias-GELU, dropout, a bias-free matmul + bias-dropout-residual; native runs the
// model's own blocks (Linear with bias, at::gelu, Dropout, add). Same parameters in every arm.
class VitMlpWorkload final : public Workload {
 public:
  VitMlpWorkload(const SuiteContext& context, const std::string& model, std::int64_t batch, std::int64_t image_size,
                 std::int64_t layers, const std::string& impl)
      : impl_(impl), batch_(batch), device_(context.device) {
    vit_ = models::VisionTransformer(vit_options(model, image_size, layers));
    vit_->to(device_);
    vit_->train();
    optimizer_ = make_default_sgd(vit_->parameters());
    const auto o = torch::TensorOptions().device(device_);
    images_ = torch::randn({batch, 3, image_size, image_size}, o);
    labels_ = torch::randint(vit_->options().num_classes, {batch}, o.dtype(torch::kLong));
    info_ = {{"model", model},      {"parameters", models::count_parameters(*vit_)},
             {"batch_size", batch}, {"image_size", image_size},
             {"layers", layers},    {"dropout", kDropout},
             {"impl", impl}};
    info_.update(default_sgd_info(device_));
    if (impl == "torchscript") warm_up_scripts();
  }

  void step() override {
    optimizer_->zero_grad();
    torch::Tensor logits;
    if (impl_ == "native") {
      logits = vit_->forward(images_);
    } else {
      auto x = vit_->embed(images_);
      for (auto& block : vit_->blocks()) x = block_forward(*block, x);
      logits = vit_->head(x);
    }
    F::cross_entropy(logits, labels_).backward();
    optimizer_->step();
  }

  std::int64_t samples_per_step() const override { return batch_; }
  nlohmann::json info() const override { return info_; }

 private:
  torch::Tensor block_forward(models::EncoderBlockImpl& block, const torch::Tensor& x) {
    auto y = x + block.dropout(block.self_attention(block.ln_1(x)));
    auto& fc1 = block.mlp->at<torch::nn::LinearImpl>(0);
    auto& fc2 = block.mlp->at<torch::nn::LinearImpl>(3);
    auto h = F::linear(block.ln_2(y), fc1.weight);
    h = impl_ == "eager"
            ? pointwise_eager(PointwiseBlock::bias_gelu, {.x = h, .bias = fc1.bias, .residual = {}, .weight = {}})
            : (*bias_gelu_)({h, fc1.bias});
    h = F::linear(torch::dropout(h, kDropout, /*train=*/true), fc2.weight);
    if (impl_ == "eager") {
      return pointwise_eager(
          PointwiseBlock::bias_dropout_residual,
          {.x = h, .bias = fc2.bias, .residual = y, .weight = {}, .dropout_p = kDropout, .training = true});
    }
    return (*bias_dropout_residual_)({h, fc2.bias, y, kDropout, true});
  }

  // Specializes and optimizes both functions for the training shapes (inputs that require grad)
  // before any timed step, and records whether they fused.
  void warm_up_scripts() {
    const auto& o = vit_->options();
    const std::int64_t tokens = vit_->seq_length();
    auto t = [&](std::vector<std::int64_t> shape) {
      return torch::randn(shape, torch::TensorOptions().device(device_).requires_grad(true));
    };
    bias_gelu_.emplace(pointwise_script(PointwiseBlock::bias_gelu), "f");
    bias_dropout_residual_.emplace(pointwise_script(PointwiseBlock::bias_dropout_residual), "f");
    record_fusion(info_, "bias_gelu_", bias_gelu_->warm_up({t({batch_, tokens, o.mlp_dim}), t({o.mlp_dim})}), device_);
    record_fusion(info_, "bias_dropout_residual_",
                  bias_dropout_residual_->warm_up({t({batch_, tokens, o.hidden_dim}), t({o.hidden_dim}),
                                                   t({batch_, tokens, o.hidden_dim}), kDropout, true}),
                  device_);
  }

  std::string impl_;
  std::int64_t batch_;
  c10::Device device_;
  models::VisionTransformer vit_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;  // make_default_sgd: Python's default step
  torch::Tensor images_, labels_;
  std::optional<ScriptFunction> bias_gelu_, bias_dropout_residual_;
  nlohmann::json info_;
};

std::vector<ArmSpec> impl_arms() {
  std::vector<ArmSpec> arms;
  for (const char* impl : {"eager", "torchscript", "native"}) arms.push_back({impl, {{"impl", impl}}});
  return arms;
}

// Rows of a pointwise case (tokens: batch x sequence) and its columns (the MLP's hidden width for
// the GELU blocks, the model width for the others, as in ViT-B/16).
std::int64_t pointwise_rows(const SuiteContext& context) {
  if (context.device.is_cuda()) return context.quick ? 8192 : 16384;
  return context.quick ? 256 : 2048;
}
std::int64_t pointwise_cols(PointwiseBlock block) {
  return block == PointwiseBlock::gelu || block == PointwiseBlock::bias_gelu ? 3072 : 768;
}

// The macro case's models: the ViTs asked for (others get a case that says why it is skipped),
// else ViT-Ti on CPU and ViT-B (quick: ViT-S) on CUDA.
std::vector<std::string> macro_models(const SuiteContext& context) {
  if (!context.models.empty()) return context.models;
  if (!context.device.is_cuda()) return {"vit_ti_16"};
  return {context.quick ? "vit_s_16" : "vit_b_16"};
}

// CPU runs the macro case on fewer tokens (64 px: 17; --quick: 32 px, 5 tokens, and 2 of the 12
// encoder blocks), so a step is affordable there; every block still has the full MLP width.
std::int64_t macro_image_size(const SuiteContext& context, const std::string& model) {
  if (context.device.is_cuda() || model_family(model) != "vit") return models::resolved_image_size(model, {});
  return context.quick ? 32 : 64;
}
std::int64_t macro_layers(const SuiteContext& context) { return context.quick && !context.device.is_cuda() ? 2 : 12; }

}  // namespace

class JitFusion final : public Suite {
 public:
  std::string name() const override { return "jit_fusion"; }
  std::string description() const override {
    return "pointwise blocks eager (default) vs TorchScript-fused vs native fused ops, alone and in ViT training";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000, 002-004",
                       "unfused pointwise ops are memory-bound, one launch + load + store each; fusion saves "
                       "them"};
  }

  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    const std::vector<PointwiseBlock> blocks =
        context.quick ? std::vector<PointwiseBlock>{PointwiseBlock::bias_gelu} : all_pointwise_blocks();
    for (auto block : blocks) {
      out.push_back({{{"block", to_string(block)},
                      {"shape", fmt::format("{}x{}", pointwise_rows(context), pointwise_cols(block))}},
                     impl_arms()});
    }
    for (const auto& model : macro_models(context)) {
      Levels params = training_params(context, model);
      params.insert(params.begin(), {"block", "vit_mlp"});
      params.emplace_back("image", std::to_string(macro_image_size(context, model)));
      params.emplace_back("layers", std::to_string(macro_layers(context)));
      out.push_back({params, impl_arms()});
    }
    return out;
  }

  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    const auto& block = level(c.params, "block");
    if (block == "vit_mlp") {
      if (auto why = model_code_fixed(level(c.params, "model"), "swaps a ViT's MLP blocks for fused ones")) return why;
    }
    if (block == "vit_mlp" && model_family(level(c.params, "model")) != "vit") {
      return level(c.params, "model") +
             " has no transformer MLP block; the macro case needs a ViT (vit_ti_16, "
             "vit_s_16, vit_b_16)";
    }
    const auto& impl = level(arm.levels, "impl");
    if (impl == "torchscript") return torchscript_unavailable_reason();
    if (impl == "native" && block != "vit_mlp") return pointwise_native_missing(pointwise_block_from(block));
    return std::nullopt;
  }

  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const auto& impl = level(arm.levels, "impl");
    const auto& block = level(c.params, "block");
    if (block == "vit_mlp") {
      return std::make_unique<VitMlpWorkload>(context, level(c.params, "model"), level_int(c.params, "batch"),
                                              level_int(c.params, "image"), level_int(c.params, "layers"), impl);
    }
    const auto b = pointwise_block_from(block);
    return std::make_unique<PointwiseWorkload>(context, b, impl, pointwise_rows(context), pointwise_cols(b));
  }

  // Whether TorchScript fused, next to its timing: a "no effect" row is only meaningful with it.
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      for (const auto& arm : c.arms) {
        if (arm.arm != "torchscript" || arm.status != ArmStatus::ok) continue;
        std::vector<std::string> parts;
        for (const char* prefix : {"", "bias_gelu_", "bias_dropout_residual_"}) {
          const std::string key = std::string(prefix) + "fusion";
          if (!arm.info.contains(key)) continue;
          parts.push_back(fmt::format("{}{} ({} groups, {} ops)", prefix, arm.info[key].get<std::string>(),
                                      arm.info.value(std::string(prefix) + "fusion_groups", 0),
                                      arm.info.value(std::string(prefix) + "fused_ops", 0)));
        }
        std::string line = fmt::format("{}: torchscript {}", c.name, fmt::join(parts, ", "));
        if (arm.info.contains("fusion_diagnosis")) line += "; " + arm.info["fusion_diagnosis"].get<std::string>();
        out.push_back(line);
      }
    }
    return out;
  }
};

TIPBENCH_REGISTER_SUITE(JitFusion);

}  // namespace tipbench::suites
