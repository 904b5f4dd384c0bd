#include "distributed/dp_workload.h"

#include "tipbench/models/resnet.h"
#include "tipbench/models/small_cnn.h"
#include "tipbench/models/vit.h"
#include "common/optimizers.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/functions/comm.h>
#include <torch/csrc/cuda/comm.h>
#include <torch/cuda.h>
#include <torch/nn/parallel/data_parallel.h>

#include <stdexcept>

namespace tipbench::distributed {

namespace {

// torch/cuda/comm.py broadcast_coalesced's default buffer_size, which Broadcast.forward uses.
constexpr std::size_t kBroadcastBufferBytes = 10 * 1024 * 1024;

// DataParallel's forward as LibTorch can do it (torch/nn/parallel/data_parallel.py's steps):
// scatter the batch, replicate the module, apply the replicas, gather the outputs on device 0.
// The replicas follow torch/nn/parallel/replicate.py: the module's structure is replicated once
// (Python's _replicate_for_data_parallel is a shallow copy that never runs an initialiser) and
// every forward broadcasts the current parameters and buffers into it (Broadcast, coalesced in
// 10 MiB buffers), replica 0 using the module's own tensors, so BatchNorm's running statistics
// of replica 0 are the module's. Where it differs from Python's (review D5, 2026-11-28; said in
// docs/distributed.md): gradients flow back through LibTorch's per-parameter ReduceAdd edges
// (torch::nn::replicate_grad_edges: each parameter's gradient copied to device 0 and added there,
// on its autograd thread), not Broadcast's backward, ReduceAddCoalesced (comm.reduce_add_coalesced:
// 10 MiB flat buffers through nccl.reduce); and parallel_apply runs the replicas on at::parallel_for
// (OpenMP: one after another under OMP_NUM_THREADS=1, which torchrun sets), not on Python threads.
// So `dp` measures LibTorch's DataParallel, which may be slower than Python's. LibTorch's own
// torch::nn::parallel::data_parallel instead
// deep-clones the module for every device on every call, and Cloneable::clone runs every
// submodule's reset(): the initialisers, on the CPU, several times per step. That is not what a
// PyTorch user's DataParallel costs, so it is not used.
class ReplicatedForward {
 public:
  virtual ~ReplicatedForward() = default;
  virtual torch::Tensor forward(const torch::Tensor& batch) = 0;
};

template <typename Impl>
class TypedReplicas final : public ReplicatedForward {
 public:
  TypedReplicas(std::shared_ptr<Impl> module, std::vector<c10::Device> devices)
      : module_(std::move(module)), devices_(std::move(devices)) {
    for (const auto& d : devices_) device_indices_.push_back(d.index());
    replicas_ = torch::nn::parallel::replicate(module_, devices_);  // clone + ReduceAdd edges, once
  }

  torch::Tensor forward(const torch::Tensor& batch) override {
    broadcast_state();
    torch::autograd::Scatter scatter(devices_, /*chunk_sizes=*/std::nullopt, /*dim=*/0);
    auto inputs = scatter.apply({batch});
    auto outputs = torch::nn::parallel::parallel_apply(replicas_, inputs, devices_);
    return torch::autograd::Gather(devices_.front(), /*dim=*/0).apply(std::move(outputs)).front();
  }

 private:
  // replicate.py: _broadcast_coalesced_reshape(params, devices) and the buffers' (detached).
  // set_data swaps a replica tensor's storage and keeps its autograd history (the ReduceAdd edge).
  void broadcast_state() {
    torch::NoGradGuard no_grad;
    auto into_replicas = [&](const std::vector<torch::Tensor>& source,
                             std::vector<torch::Tensor> (torch::nn::Module::*of)(bool) const) {
      if (source.empty()) return;
      const auto copies = torch::cuda::broadcast_coalesced(source, device_indices_, kBroadcastBufferBytes);
      for (std::size_t r = 0; r < replicas_.size(); ++r) {
        auto targets = ((*replicas_[r]).*of)(/*recurse=*/true);
        for (std::size_t k = 0; k < targets.size(); ++k) targets[k].set_data(r == 0 ? source[k] : copies[r][k]);
      }
    };
    into_replicas(module_->parameters(), &torch::nn::Module::parameters);
    into_replicas(module_->buffers(), &torch::nn::Module::buffers);
  }

  std::shared_ptr<Impl> module_;
  std::vector<c10::Device> devices_;
  std::vector<std::int64_t> device_indices_;
  std::vector<std::shared_ptr<Impl>> replicas_;
};

// The replicas need the module's concrete type: clone() and forward() are the model's.
template <typename Holder>
std::unique_ptr<ReplicatedForward> try_replicate(const std::shared_ptr<torch::nn::Module>& module,
                                                 const std::vector<c10::Device>& devices) {
  auto typed = std::dynamic_pointer_cast<typename Holder::Impl>(module);
  if (!typed) return nullptr;
  return std::make_unique<TypedReplicas<typename Holder::Impl>>(typed, devices);
}

class DpWorkload final : public Workload {
 public:
  DpWorkload(const SuiteContext& context, const suites::TrainingSpec& spec)
      : spec_(spec),
        gpus_(static_cast<std::int64_t>(torch::cuda::device_count())),
        model_(models::make_model(spec.model, spec.model_options)) {
    if (gpus_ < 2) throw std::invalid_argument(fmt::format("DataParallel needs at least 2 GPUs; {} visible", gpus_));
    module_ = model_.ptr();
    module_->to(c10::Device(c10::kCUDA, 0));
    module_->train();
    std::vector<c10::Device> devices;
    for (std::int64_t i = 0; i < gpus_; ++i) devices.emplace_back(c10::kCUDA, static_cast<c10::DeviceIndex>(i));
    replicas_ = try_replicate<models::SmallCNN>(module_, devices);
    if (!replicas_) replicas_ = try_replicate<models::ResNet>(module_, devices);
    if (!replicas_) replicas_ = try_replicate<models::VisionTransformer>(module_, devices);
    if (!replicas_) throw std::runtime_error("DataParallel: no concrete module type for " + spec_.model);
    optimizer_ = suites::make_default_sgd(module_->parameters());
    const std::int64_t side = models::resolved_image_size(spec.model, spec.model_options);
    const auto classes = models::resolved_num_classes(spec.model, spec.model_options);
    const auto options = torch::TensorOptions().device(c10::Device(c10::kCUDA, 0));
    images_ = torch::randn({spec.batch_size * gpus_, 3, side, side}, options);
    labels_ = torch::randint(classes, {spec.batch_size * gpus_}, options.dtype(torch::kLong));
    // The harness resets cuda:0's peak; the other devices' are this arm's to report.
    for (std::int64_t i = 1; i < gpus_; ++i) {
      c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(i));
    }
  }

  void step() override {
    optimizer_->zero_grad(true);
    torch::nn::functional::cross_entropy(replicas_->forward(images_), labels_).backward();
    optimizer_->step();
  }

  std::int64_t samples_per_step() const override { return spec_.batch_size * gpus_; }

  nlohmann::json info() const override {
    nlohmann::json out = {
        {"model", spec_.model},
        {"batch_per_device", spec_.batch_size},
        {"gpus", gpus_},
        {"replication", "structure once, parameters and buffers broadcast every step (nn.DataParallel)"}};
    out.update(suites::default_sgd_info(c10::Device(c10::kCUDA, 0)));
    return out;
  }

  // Peak memory of the devices besides cuda:0 (whose peak the harness records).
  std::map<std::string, double> metrics() const override {
    std::map<std::string, double> out;
    for (std::int64_t i = 1; i < gpus_; ++i) {
      const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(i));
      out[fmt::format("cuda{}_peak_memory_mb", i)] =
          static_cast<double>(stats.allocated_bytes[0].peak) / (1024.0 * 1024.0);
    }
    return out;
  }

 private:
  suites::TrainingSpec spec_;
  std::int64_t gpus_;
  torch::nn::AnyModule model_;
  std::shared_ptr<torch::nn::Module> module_;
  std::unique_ptr<ReplicatedForward> replicas_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;  // make_default_sgd: Python's default step
  torch::Tensor images_, labels_;
};

}  // namespace

std::unique_ptr<Workload> make_dp_workload(const SuiteContext& context, const suites::TrainingSpec& spec) {
  return std::make_unique<DpWorkload>(context, spec);
}

}  // namespace tipbench::distributed
