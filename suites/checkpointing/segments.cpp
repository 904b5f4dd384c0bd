#include "segments.h"

#include "checkpoint.h"
#include "tipbench/models/resnet.h"
#include "tipbench/models/small_cnn.h"
#include "tipbench/models/vit.h"

#include <stdexcept>

namespace tipbench::suites {

namespace {

using Fn = std::function<torch::Tensor(const torch::Tensor&)>;

struct Unit {
  Fn fn;
  std::shared_ptr<torch::nn::Module> module;  // whose parameters the unit reads
};

struct Pieces {
  Fn prefix;
  std::vector<std::vector<Unit>> stages;
  Fn head;
};

Pieces pieces_of(const std::shared_ptr<torch::nn::Module>& module) {
  namespace m = tipbench::models;
  Pieces p;
  if (auto impl = std::dynamic_pointer_cast<m::ResNetImpl>(module)) {
    m::ResNet net(impl);
    p.prefix = [net](const torch::Tensor& x) mutable { return net->stem(x); };
    for (const auto& stage : net->stages()) {
      std::vector<Unit> units;
      for (auto block : *stage) {  // copies: the lambdas call non-const forward()
        units.push_back({[block](const torch::Tensor& x) mutable { return block.forward(x); }, block.ptr()});
      }
      p.stages.push_back(std::move(units));
    }
    p.head = [net](const torch::Tensor& x) mutable { return net->head(x); };
  } else if (auto impl = std::dynamic_pointer_cast<m::VisionTransformerImpl>(module)) {
    m::VisionTransformer net(impl);
    p.prefix = [net](const torch::Tensor& x) mutable { return net->embed(x); };
    for (auto block : net->blocks()) {
      p.stages.push_back({{[block](const torch::Tensor& x) mutable { return block->forward(x); }, block.ptr()}});
    }
    p.head = [net](const torch::Tensor& x) mutable { return net->head(x); };
  } else if (auto impl = std::dynamic_pointer_cast<m::SmallCNNImpl>(module)) {
    m::SmallCNN net(impl);
    p.prefix = [](const torch::Tensor& x) { return x; };
    for (auto stage : net->stages()) {
      p.stages.push_back({{[stage](const torch::Tensor& x) mutable { return stage->forward(x); }, stage.ptr()}});
    }
    p.head = [net](const torch::Tensor& x) mutable { return net->head(x); };
  } else {
    throw std::invalid_argument("activation checkpointing knows ResNet, VisionTransformer and SmallCNN; got " +
                                module->name());
  }
  return p;
}

}  // namespace

CheckpointPolicy CheckpointPolicy::parse(const std::string& name) {
  if (name == "off") return {Kind::off, 0};
  if (name == "per_stage") return {Kind::per_stage, 0};
  const std::string prefix = "every_";
  if (name.rfind(prefix, 0) == 0) {
    try {
      std::size_t used = 0;
      const int k = std::stoi(name.substr(prefix.size()), &used);
      if (k >= 1 && used == name.size() - prefix.size()) return {Kind::every_k, k};
    } catch (const std::exception&) {
    }
  }
  throw std::invalid_argument("unknown checkpoint policy '" + name + "'; valid: off, per_stage, every_<k> (k >= 1)");
}

std::string CheckpointPolicy::name() const {
  switch (kind) {
    case Kind::off: return "off";
    case Kind::per_stage: return "per_stage";
    case Kind::every_k: return "every_" + std::to_string(k);
  }
  return "";
}

SegmentedModel::SegmentedModel(torch::nn::AnyModule model, CheckpointPolicy policy)
    : model_(std::move(model)), policy_(policy) {
  Pieces p = pieces_of(model_.ptr());
  prefix_ = std::move(p.prefix);
  head_ = std::move(p.head);
  std::vector<std::vector<Unit>> groups;
  if (policy_.kind == CheckpointPolicy::Kind::per_stage) {
    groups = std::move(p.stages);
  } else if (policy_.kind == CheckpointPolicy::Kind::every_k) {
    for (auto& stage : p.stages) {
      for (auto& unit : stage) {
        if (groups.empty() || static_cast<int>(groups.back().size()) == policy_.k) groups.emplace_back();
        groups.back().push_back(std::move(unit));
      }
    }
  }
  for (auto& group : groups) {
    Segment s;
    std::vector<Fn> units;
    for (auto& unit : group) {
      units.push_back(std::move(unit.fn));
      for (auto& param : unit.module->parameters()) s.params.push_back(param);
    }
    s.units = std::make_shared<const std::vector<Fn>>(std::move(units));
    segments_.push_back(std::move(s));
  }
}

torch::Tensor SegmentedModel::forward(const torch::Tensor& images) {
  if (policy_.kind == CheckpointPolicy::Kind::off) return model_.forward(images);
  torch::Tensor x = prefix_(images);
  for (const auto& segment : segments_) {
    // Shares the unit list: the autograd node keeps the function alive until backward.
    auto run = [units = segment.units](const torch::Tensor& in) {
      torch::Tensor y = in;
      for (const auto& unit : *units) y = unit(y);
      return y;
    };
    x = checkpoint(run, x, segment.params);
  }
  return head_(x);
}

std::vector<int> SegmentedModel::units_per_segment() const {
  std::vector<int> out;
  for (const auto& s : segments_) out.push_back(static_cast<int>(s.units->size()));
  return out;
}

}  // namespace tipbench::suites
