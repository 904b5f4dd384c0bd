// Vision Transformers (ViT-Ti/16, ViT-S/16, ViT-B/16) laid out like torchvision's
// VisionTransformer, so its state dicts load by name; attention runs through
// at::scaled_dot_product_attention (torch::nn::MultiheadAttention never calls SDPA). Example:
//   tipbench::models::VisionTransformer vit(tipbench::models::ViTOptions::b16());
//   auto y = vit->forward(torch::randn({2, 3, 224, 224}));   // [2, 1000]
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tipbench::models {

struct ViTOptions {
  int64_t image_size = 224;
  int64_t patch_size = 16;
  int64_t num_layers = 12;
  int64_t num_heads = 12;
  int64_t hidden_dim = 768;
  int64_t mlp_dim = 3072;
  double dropout = 0.0;            // after the embedding, in each block and in the MLP
  double attention_dropout = 0.0;  // on the attention weights (SDPA dropout_p, training only)
  int64_t num_classes = 1000;

  static ViTOptions ti16() { return {224, 16, 12, 3, 192, 768}; }
  static ViTOptions s16() { return {224, 16, 12, 6, 384, 1536}; }
  static ViTOptions b16() { return {224, 16, 12, 12, 768, 3072}; }
  // ti16/s16/b16 by model name ("vit_ti_16", ...); std::invalid_argument for any other name.
  static ViTOptions of(const std::string& model);
};

// Multi-head self-attention with nn.MultiheadAttention's parameter names (in_proj_weight,
// in_proj_bias, out_proj.weight, out_proj.bias), batch-first input [N, L, E], computed with SDPA.
class SelfAttentionImpl : public torch::nn::Cloneable<SelfAttentionImpl> {
 public:
  SelfAttentionImpl(int64_t embed_dim, int64_t num_heads, double dropout);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

  torch::Tensor in_proj_weight, in_proj_bias;
  torch::nn::Linear out_proj{nullptr};

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_;
};
TORCH_MODULE(SelfAttention);

// Pre-norm transformer block: x + attn(ln_1(x)), then y + mlp(ln_2(y)).
class EncoderBlockImpl : public torch::nn::Cloneable<EncoderBlockImpl> {
 public:
  EncoderBlockImpl(int64_t hidden_dim, int64_t num_heads, int64_t mlp_dim, double dropout, double attention_dropout);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  SelfAttention self_attention{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Sequential mlp{nullptr};  // 0 Linear, 1 GELU, 2 Dropout, 3 Linear, 4 Dropout

 private:
  int64_t hidden_dim_, num_heads_, mlp_dim_;
  double dropout_p_, attention_dropout_;
};
TORCH_MODULE(EncoderBlock);

// pos_embedding, dropout, layers.encoder_layer_<i>, final ln.
class EncoderImpl : public torch::nn::Cloneable<EncoderImpl> {
 public:
  EncoderImpl(int64_t seq_length, const ViTOptions& options);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

  torch::Tensor add_position(torch::Tensor x);  // x + pos_embedding, then dropout
  std::vector<EncoderBlock> blocks() const;     // layers, in order

  torch::Tensor pos_embedding;
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Sequential layers{nullptr};
  torch::nn::LayerNorm ln{nullptr};

 private:
  int64_t seq_length_;
  ViTOptions options_;
};
TORCH_MODULE(Encoder);

class VisionTransformerImpl : public torch::nn::Cloneable<VisionTransformerImpl> {
 public:
  explicit VisionTransformerImpl(ViTOptions options = ViTOptions::b16());
  void reset() override;
  torch::Tensor forward(torch::Tensor x);  // head(blocks(embed(x)))

  // The pieces of forward(), for per-block work such as activation checkpointing.
  torch::Tensor embed(torch::Tensor images);  // patches + class token + position, [N, L, E]
  std::vector<EncoderBlock> blocks() const;   // encoder.layers, in order
  torch::Tensor head(torch::Tensor tokens);   // encoder.ln, class token, heads

  const ViTOptions& options() const { return options_; }
  int64_t seq_length() const;  // (image_size / patch_size)^2 + 1

  torch::Tensor class_token;
  torch::nn::Conv2d conv_proj{nullptr};
  Encoder encoder{nullptr};
  torch::nn::Sequential heads{nullptr};  // "head": Linear

 private:
  ViTOptions options_;
};
TORCH_MODULE(VisionTransformer);

}  // namespace tipbench::models
