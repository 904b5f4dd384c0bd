// The model factory: build any reference model by name with one options struct. Example:
//   auto model = tipbench::models::make_model("resnet50", {.num_classes = 10, .channels_last = true});
//   auto y = model.forward(torch::randn({8, 3, 224, 224}));   // [8, 10]
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tipbench::models {

struct ModelOptions {
  int64_t num_classes = 0;           // 0 = the model's default (1000 for ResNet/ViT, 10 for small_cnn)
  int64_t image_size = 0;            // 0 = the model's default (224 for ResNet/ViT, 32 for small_cnn)
  bool conv_bias_before_bn = false;  // every conv that feeds a BatchNorm gets bias=true (torchvision: false)
  bool channels_last = false;        // convert 4-D parameters to ChannelsLast memory format
  bool inplace_relu = true;          // CNN ReLUs overwrite their input (torchvision's ResNet); ViTs have none
  double dropout = 0.0;              // ViT dropout (torchvision default 0); CNNs have none
  double attention_dropout = 0.0;    // ViT dropout on the attention weights (torchvision default 0)
};

struct ModelInfo {
  std::string name;    // "resnet50"
  std::string family;  // "cnn", "vit", or "file" (a user's model file: model_file.h)
  int64_t default_image_size;
  int64_t default_num_classes;  // ImageNet's 1000 for the torchvision models, CIFAR's 10 for small_cnn
  std::string description;      // one line
};

// Every model make_model() knows, in a fixed order:
// resnet18, resnet34, resnet50, vit_ti_16, vit_s_16, vit_b_16, small_cnn.
const std::vector<ModelInfo>& available_models();

// Builds a freshly initialized model (torchvision's init, the current torch seed) on the CPU in
// float32. The held module is a ResNet, VisionTransformer or SmallCNN (all nn::Cloneable, so
// `model.ptr()->clone()` and data_parallel work); `model.get<ResNet>()` reaches the typed holder.
// Throws std::invalid_argument("unknown model 'x'; valid: resnet18, ...") for an unknown name, and
// for invalid options (num_classes < 0, image_size < 0, a ViT image_size not divisible by 16,
// dropout outside [0, 1)).
torch::nn::AnyModule make_model(const std::string& name, const ModelOptions& options = {});

// The input side length the model is built for: options.image_size, or the model's default when 0.
// Throws like make_model for an unknown name or an invalid size.
int64_t resolved_image_size(const std::string& name, const ModelOptions& options);

// The number of classes the model is built for: options.num_classes, or the model's default when 0.
int64_t resolved_num_classes(const std::string& name, const ModelOptions& options);

// Number of trainable parameter elements (parameters with requires_grad).
int64_t count_parameters(const torch::nn::Module& module);

// Converts every 4-D parameter and buffer to ChannelsLast in place (nn::Module::to has no
// memory-format overload). Call before building the optimizer.
void to_channels_last(torch::nn::Module& module);

}  // namespace tipbench::models
