#include "tipbench/models/model.h"

#include "model_registry.h"

#include <stdexcept>

#include "tipbench/models/resnet.h"
#include "tipbench/models/small_cnn.h"
#include "tipbench/models/vit.h"

namespace tipbench::models {
namespace {

torch::nn::AnyModule make_resnet(ResNetOptions o, const ModelOptions& options) {
  o.num_classes = options.num_classes;
  o.conv_bias_before_bn = options.conv_bias_before_bn;
  o.inplace_relu = options.inplace_relu;
  return torch::nn::AnyModule(ResNet(o));
}

torch::nn::AnyModule make_vit(ViTOptions o, const ModelOptions& options, int64_t image_size) {
  o.image_size = image_size;
  o.num_classes = options.num_classes;
  o.dropout = options.dropout;
  o.attention_dropout = options.attention_dropout;
  return torch::nn::AnyModule(VisionTransformer(o));
}

// The one list of models: adding a reference model is one entry here (a model file registers
// itself at run time: model_file.cpp).
std::vector<ModelEntry>& registry() {
  static std::vector<ModelEntry> entries = {
      {{"resnet18", "cnn", 224, 1000, "ResNet-18 (torchvision layout, BasicBlock, 11.7 M params)"},
       [](const ModelOptions& o, int64_t) { return make_resnet(ResNetOptions::resnet18(), o); }},
      {{"resnet34", "cnn", 224, 1000, "ResNet-34 (torchvision layout, BasicBlock, 21.8 M params)"},
       [](const ModelOptions& o, int64_t) { return make_resnet(ResNetOptions::resnet34(), o); }},
      {{"resnet50", "cnn", 224, 1000, "ResNet-50 v1.5 (torchvision layout, Bottleneck, 25.6 M params)"},
       [](const ModelOptions& o, int64_t) { return make_resnet(ResNetOptions::resnet50(), o); }},
      {{"vit_ti_16", "vit", 224, 1000, "ViT-Ti/16 (hidden 192, 3 heads, MLP 768, 12 layers, 5.7 M params)"},
       [](const ModelOptions& o, int64_t s) { return make_vit(ViTOptions::ti16(), o, s); }},
      {{"vit_s_16", "vit", 224, 1000, "ViT-S/16 (hidden 384, 6 heads, MLP 1536, 12 layers, 22.1 M params)"},
       [](const ModelOptions& o, int64_t s) { return make_vit(ViTOptions::s16(), o, s); }},
      {{"vit_b_16", "vit", 224, 1000, "ViT-B/16 (hidden 768, 12 heads, MLP 3072, 12 layers, 86.6 M params)"},
       [](const ModelOptions& o, int64_t s) { return make_vit(ViTOptions::b16(), o, s); }},
      {{"small_cnn", "cnn", 32, 10, "4 stride-2 conv-BN-ReLU stages (32-256 ch), GAP, linear; 0.39 M params"},
       [](const ModelOptions& o, int64_t) {
         return torch::nn::AnyModule(SmallCNN(SmallCNNOptions{.num_classes = o.num_classes,
                                                              .conv_bias_before_bn = o.conv_bias_before_bn,
                                                              .inplace_relu = o.inplace_relu}));
       }},
  };
  return entries;
}

const ModelEntry& find(const std::string& name) {
  for (const auto& e : registry()) {
    if (e.info.name == name) return e;
  }
  std::string valid;
  for (const auto& e : registry()) valid += (valid.empty() ? "" : ", ") + e.info.name;
  throw std::invalid_argument("unknown model '" + name + "'; valid: " + valid);
}

// Checks the options against the model and returns the image size to build for.
int64_t validate(const ModelEntry& e, const ModelOptions& o) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("invalid options for model '" + e.info.name + "': " + what);
  };
  if (o.num_classes < 0) fail("num_classes must be >= 1 (0 = default), got " + std::to_string(o.num_classes));
  if (o.image_size < 0) fail("image_size must be >= 0 (0 = default), got " + std::to_string(o.image_size));
  if (!(o.dropout >= 0.0 && o.dropout < 1.0)) fail("dropout must be in [0, 1), got " + std::to_string(o.dropout));
  if (!(o.attention_dropout >= 0.0 && o.attention_dropout < 1.0)) {
    fail("attention_dropout must be in [0, 1), got " + std::to_string(o.attention_dropout));
  }
  const int64_t size = o.image_size == 0 ? e.info.default_image_size : o.image_size;
  if (e.info.family == "file") {  // a file is one model: its size, its classes, its code
    if (size != e.info.default_image_size) {
      fail("a model file is built for " + std::to_string(e.info.default_image_size) + " pixels, not " +
           std::to_string(size));
    }
    if (o.num_classes != 0 && o.num_classes != e.info.default_num_classes) {
      fail("a model file has " + std::to_string(e.info.default_num_classes) + " classes, not " +
           std::to_string(o.num_classes));
    }
    if (o.conv_bias_before_bn || o.dropout != 0.0 || o.attention_dropout != 0.0) {
      fail("a model file's code cannot be changed (conv bias, dropout)");
    }
  }
  if (e.info.family == "vit" && size % 16 != 0) {
    fail("ViT image_size must be a multiple of the patch size 16, got " + std::to_string(size));
  }
  return size;
}

}  // namespace

void register_model(ModelEntry entry) {
  for (const auto& e : registry()) {
    if (e.info.name == entry.info.name) throw std::invalid_argument("model '" + e.info.name + "' exists already");
  }
  registry().push_back(std::move(entry));
}

const std::vector<ModelInfo>& available_models() {
  // Rebuilt when a model file joined the registry (registration happens before any suite runs).
  static std::vector<ModelInfo> infos;
  if (infos.size() != registry().size()) {
    infos.clear();
    for (const auto& e : registry()) infos.push_back(e.info);
  }
  return infos;
}

int64_t resolved_image_size(const std::string& name, const ModelOptions& options) {
  return validate(find(name), options);
}

int64_t resolved_num_classes(const std::string& name, const ModelOptions& options) {
  const auto& entry = find(name);
  validate(entry, options);
  return options.num_classes == 0 ? entry.info.default_num_classes : options.num_classes;
}

torch::nn::AnyModule make_model(const std::string& name, const ModelOptions& options) {
  const auto& entry = find(name);
  ModelOptions resolved = options;
  resolved.num_classes = resolved_num_classes(name, options);
  auto model = entry.make(resolved, validate(entry, resolved));
  if (options.channels_last) to_channels_last(*model.ptr());
  return model;
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) {
    if (p.requires_grad()) n += p.numel();
  }
  return n;
}

void to_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& t : module.parameters()) {
    if (t.dim() == 4) t.set_data(t.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
  for (auto& t : module.buffers()) {
    if (t.dim() == 4) t.set_data(t.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
}

}  // namespace tipbench::models
