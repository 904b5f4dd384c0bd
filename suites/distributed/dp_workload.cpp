#include "distributed/dp_workload.h"

#include "tipbench/models/resnet.h"
#include "tipbench/models/small_cnn.h"
#include "tipbench/models/vit.h"

#include <torch/cuda.h>
#include <torch/nn/parallel/data_parallel.h>

#include <stdexcept>

namespace tipbench::distributed {

namespace {

// data_parallel needs the concrete module type: it clones the module per device and calls its
// forward.
template <typename Holder>
bool try_forward(const std::shared_ptr<torch::nn::Module>& module, const torch::Tensor& x, torch::Tensor& out) {
  auto typed = std::dynamic_pointer_cast<typename Holder::Impl>(module);
  if (!typed) return false;
  out = torch::nn::parallel::data_parallel(Holder(typed), x);
  return true;
}

class DpWorkload final : public Workload {
 public:
  DpWorkload(const SuiteContext& context, const suites::TrainingSpec& spec)
      : spec_(spec), gpus_(static_cast<std::int64_t>(torch::cuda::device_count())),
        model_(models::make_model(spec.model, spec.model_options)) {
    module_ = model_.ptr();
    module_->to(c10::Device(c10::kCUDA, 0));
    module_->train();
    optimizer_ = std::make_unique<torch::optim::SGD>(module_->parameters(),
                                                     torch::optim::SGDOptions(0.01).momentum(0.9));
    const std::int64_t side = models::resolved_image_size(spec.model, spec.model_options);
    const auto classes = models::resolved_num_classes(spec.model, spec.model_options);
    const auto options = torch::TensorOptions().device(c10::Device(c10::kCUDA, 0));
    images_ = torch::randn({spec.batch_size * gpus_, 3, side, side}, options);
    labels_ = torch::randint(classes, {spec.batch_size * gpus_}, options.dtype(torch::kLong));
  }

  void step() override {
    optimizer_->zero_grad(true);
    torch::Tensor out;
    if (!try_forward<models::SmallCNN>(module_, images_, out) && !try_forward<models::ResNet>(module_, images_, out) &&
        !try_forward<models::VisionTransformer>(module_, images_, out)) {
      throw std::runtime_error("DataParallel: no concrete module type for " + spec_.model);
    }
    torch::nn::functional::cross_entropy(out, labels_).backward();
    optimizer_->step();
  }

  std::int64_t samples_per_step() const override { return spec_.batch_size * gpus_; }

  nlohmann::json info() const override {
    return {{"model", spec_.model}, {"batch_per_device", spec_.batch_size}, {"gpus", gpus_}};
  }

 private:
  suites::TrainingSpec spec_;
  std::int64_t gpus_;
  torch::nn::AnyModule model_;
  std::shared_ptr<torch::nn::Module> module_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  torch::Tensor images_, labels_;
};

}  // namespace

std::unique_ptr<Workload> make_dp_workload(const SuiteContext& context, const suites::TrainingSpec& spec) {
  return std::make_unique<DpWorkload>(context, spec);
}

}  // namespace tipbench::distributed
