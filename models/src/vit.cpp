#include "tipbench/models/vit.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace tipbench::models {

ViTOptions ViTOptions::of(const std::string& model) {
  if (model == "vit_ti_16") return ti16();
  if (model == "vit_s_16") return s16();
  if (model == "vit_b_16") return b16();
  throw std::invalid_argument("not a reference ViT: '" + model + "'; valid: vit_ti_16, vit_s_16, vit_b_16");
}
namespace {

namespace nn = torch::nn;

// torch.nn.init.trunc_normal_(t, std=std) with its default absolute bounds [-2, 2]: redraw the
// few samples that fall outside (none do for the small stds used here).
void trunc_normal_(torch::Tensor t, double std, double lo = -2.0, double hi = 2.0) {
  t.normal_(0.0, std);
  for (auto out = (t < lo) | (t > hi); out.any().item<bool>(); out = (t < lo) | (t > hi)) {
    t.masked_scatter_(out, torch::empty_like(t).normal_(0.0, std).masked_select(out));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
SelfAttentionImpl::SelfAttentionImpl(int64_t embed_dim, int64_t num_heads, double dropout)
    : embed_dim_(embed_dim), num_heads_(num_heads), dropout_(dropout) {
  TORCH_CHECK(embed_dim % num_heads == 0, "embed_dim ", embed_dim, " is not divisible by num_heads ", num_heads);
  reset();
}

void SelfAttentionImpl::reset() {
  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * embed_dim_, embed_dim_}));
  in_proj_bias = register_parameter("in_proj_bias", torch::zeros({3 * embed_dim_}));
  out_proj = register_module("out_proj", nn::Linear(embed_dim_, embed_dim_));
  // nn.MultiheadAttention._reset_parameters: xavier_uniform_ in_proj, zero biases; out_proj.weight
  // keeps the default Linear init.
  torch::NoGradGuard no_grad;
  nn::init::xavier_uniform_(in_proj_weight);
  nn::init::zeros_(out_proj->bias);
}

torch::Tensor SelfAttentionImpl::forward(torch::Tensor x) {
  const int64_t n = x.size(0), len = x.size(1);
  const int64_t head_dim = embed_dim_ / num_heads_;
  // [N, L, 3E] -> [3, N, heads, L, head_dim]
  auto qkv = torch::nn::functional::linear(x, in_proj_weight, in_proj_bias)
                 .view({n, len, 3, num_heads_, head_dim})
                 .permute({2, 0, 3, 1, 4});
  auto out = at::scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], /*attn_mask=*/{},
                                              /*dropout_p=*/is_training() ? dropout_ : 0.0);
  return out_proj(out.transpose(1, 2).reshape({n, len, embed_dim_}));
}

// ---------------------------------------------------------------------------------------------
EncoderBlockImpl::EncoderBlockImpl(int64_t hidden_dim, int64_t num_heads, int64_t mlp_dim, double dropout,
                                   double attention_dropout)
    : hidden_dim_(hidden_dim),
      num_heads_(num_heads),
      mlp_dim_(mlp_dim),
      dropout_p_(dropout),
      attention_dropout_(attention_dropout) {
  reset();
}

void EncoderBlockImpl::reset() {
  auto layer_norm = [&] { return nn::LayerNorm(nn::LayerNormOptions({hidden_dim_}).eps(1e-6)); };
  ln_1 = register_module("ln_1", layer_norm());
  self_attention = register_module("self_attention", SelfAttention(hidden_dim_, num_heads_, attention_dropout_));
  dropout = register_module("dropout", nn::Dropout(dropout_p_));
  ln_2 = register_module("ln_2", layer_norm());
  nn::Linear fc1(hidden_dim_, mlp_dim_), fc2(mlp_dim_, hidden_dim_);
  mlp = register_module("mlp", nn::Sequential(fc1, nn::GELU(), nn::Dropout(dropout_p_), fc2, nn::Dropout(dropout_p_)));
  // torchvision MLPBlock: xavier_uniform_ weights, normal(std=1e-6) biases.
  torch::NoGradGuard no_grad;
  for (auto& fc : {fc1, fc2}) {
    nn::init::xavier_uniform_(fc->weight);
    nn::init::normal_(fc->bias, 0.0, 1e-6);
  }
}

torch::Tensor EncoderBlockImpl::forward(torch::Tensor x) {
  auto y = x + dropout(self_attention(ln_1(x)));
  return y + mlp->forward(ln_2(y));
}

// ---------------------------------------------------------------------------------------------
EncoderImpl::EncoderImpl(int64_t seq_length, const ViTOptions& options) : seq_length_(seq_length), options_(options) {
  reset();
}

void EncoderImpl::reset() {
  const auto& o = options_;
  pos_embedding = register_parameter("pos_embedding", torch::empty({1, seq_length_, o.hidden_dim}));
  {
    torch::NoGradGuard no_grad;
    pos_embedding.normal_(0.0, 0.02);  // BERT-style
  }
  dropout = register_module("dropout", nn::Dropout(o.dropout));
  layers = nn::Sequential();
  for (int64_t i = 0; i < o.num_layers; ++i) {
    layers->push_back("encoder_layer_" + std::to_string(i),
                      EncoderBlock(o.hidden_dim, o.num_heads, o.mlp_dim, o.dropout, o.attention_dropout));
  }
  register_module("layers", layers);
  ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({o.hidden_dim}).eps(1e-6)));
}

torch::Tensor EncoderImpl::add_position(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 3 && x.size(1) == seq_length_ && x.size(2) == options_.hidden_dim, "expected tokens [N, ",
              seq_length_, ", ", options_.hidden_dim, "], got ", x.sizes());
  return dropout(x + pos_embedding);
}

std::vector<EncoderBlock> EncoderImpl::blocks() const {
  std::vector<EncoderBlock> out;
  out.reserve(layers->size());
  for (const auto& m : layers->children()) {
    out.emplace_back(std::dynamic_pointer_cast<EncoderBlockImpl>(m));
  }
  return out;
}

torch::Tensor EncoderImpl::forward(torch::Tensor x) { return ln(layers->forward(add_position(std::move(x)))); }

// ---------------------------------------------------------------------------------------------
VisionTransformerImpl::VisionTransformerImpl(ViTOptions options) : options_(options) {
  TORCH_CHECK(options_.image_size % options_.patch_size == 0, "ViT image_size ", options_.image_size,
              " is not divisible by patch_size ", options_.patch_size);
  reset();
}

int64_t VisionTransformerImpl::seq_length() const {
  const int64_t side = options_.image_size / options_.patch_size;
  return side * side + 1;
}

void VisionTransformerImpl::reset() {
  const auto& o = options_;
  class_token = register_parameter("class_token", torch::zeros({1, 1, o.hidden_dim}));
  conv_proj =
      register_module("conv_proj", nn::Conv2d(nn::Conv2dOptions(3, o.hidden_dim, o.patch_size).stride(o.patch_size)));
  encoder = register_module("encoder", Encoder(seq_length(), o));
  nn::Linear head(o.hidden_dim, o.num_classes);
  heads = nn::Sequential();
  heads->push_back("head", head);
  register_module("heads", heads);

  // torchvision: conv_proj trunc_normal(std = sqrt(1 / fan_in)), zero bias; zero head.
  torch::NoGradGuard no_grad;
  const double fan_in = 3.0 * static_cast<double>(o.patch_size * o.patch_size);
  trunc_normal_(conv_proj->weight, std::sqrt(1.0 / fan_in));
  nn::init::zeros_(conv_proj->bias);
  nn::init::zeros_(head->weight);
  nn::init::zeros_(head->bias);
}

torch::Tensor VisionTransformerImpl::embed(torch::Tensor images) {
  const auto& o = options_;
  TORCH_CHECK(images.dim() == 4 && images.size(2) == o.image_size && images.size(3) == o.image_size,
              "expected images [N, 3, ", o.image_size, ", ", o.image_size, "], got ", images.sizes());
  const int64_t n = images.size(0);
  // [N, 3, H, W] -> [N, E, H/p, W/p] -> [N, (H/p)(W/p), E]
  auto x = conv_proj(images).reshape({n, o.hidden_dim, -1}).permute({0, 2, 1});
  x = torch::cat({class_token.expand({n, -1, -1}), x}, /*dim=*/1);
  return encoder->add_position(x);
}

std::vector<EncoderBlock> VisionTransformerImpl::blocks() const { return encoder->blocks(); }

torch::Tensor VisionTransformerImpl::head(torch::Tensor tokens) {
  return heads->forward(encoder->ln(tokens).select(/*dim=*/1, /*index=*/0));
}

torch::Tensor VisionTransformerImpl::forward(torch::Tensor x) {
  x = embed(std::move(x));
  for (auto& block : blocks()) x = block->forward(x);
  return head(std::move(x));
}

}  // namespace tipbench::models
