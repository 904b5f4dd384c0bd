// Which parts of a reference model are checkpointed. A model is seen as prefix -> units -> head,
// the units grouped into stages:
//   ResNet     stem (conv1, bn1, pool)  | residual blocks, stages layer1..layer4 | pool + fc
//   ViT        patch + position embed   | encoder blocks, one stage each        | ln + head
//   SmallCNN   -                        | conv-BN-ReLU stages                   | pool + fc
// The prefix and head are never checkpointed. Policies (the checkpointing suite's arm names):
//   off        the model's own forward, nothing checkpointed
//   per_stage  one segment per stage (a ResNet stage, a ViT block, a SmallCNN stage)
//   every_<k>  k consecutive units per segment (residual blocks, ViT blocks, SmallCNN stages)
// Example:
//   SegmentedModel net(models::make_model("resnet50"), CheckpointPolicy::parse("per_stage"));
//   auto logits = net.forward(images);   // 4 checkpointed segments
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace tipbench::suites {

struct CheckpointPolicy {
  enum class Kind { off, per_stage, every_k };
  Kind kind = Kind::off;
  int k = 0;  // every_k only

  // "off", "per_stage", "every_<k>" with k >= 1; throws std::invalid_argument otherwise.
  static CheckpointPolicy parse(const std::string& name);
  std::string name() const;
};

class SegmentedModel {
 public:
  // Throws std::invalid_argument for a module that is not a ResNet, VisionTransformer or SmallCNN.
  SegmentedModel(torch::nn::AnyModule model, CheckpointPolicy policy);

  torch::Tensor forward(const torch::Tensor& images);
  torch::nn::Module& module() { return *model_.ptr(); }
  // Checkpointed segments and the units in each, e.g. {3, 4, 6, 3} for resnet50 per_stage.
  std::vector<int> units_per_segment() const;

 private:
  using Fn = std::function<torch::Tensor(const torch::Tensor&)>;
  struct Segment {
    std::shared_ptr<const std::vector<Fn>> units;
    std::vector<torch::Tensor> params;
  };
  torch::nn::AnyModule model_;
  CheckpointPolicy policy_;
  Fn prefix_, head_;
  std::vector<Segment> segments_;
};

}  // namespace tipbench::suites
