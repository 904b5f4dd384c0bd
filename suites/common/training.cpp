#include "training.h"

#include "tipbench/models/model_flops.h"

#include "largest_batch.h"

#include "loss_scaler.h"
#include "step_policy.h"
#include "tipbench/models/model_file.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

namespace tipbench::suites {

namespace {

// The policy that replaces `hook` (overrides it), if any; a second one is a conflict (the step has
// one inputs batch, one zero_grad, one count, one run).
StepPolicy* owner_of(const TrainingSpec& spec, const char* hook, bool StepPolicy::Replaces::*replaced) {
  StepPolicy* owner = nullptr;
  for (const auto& policy : spec.policies) {
    if (!policy) throw std::invalid_argument("a training step's policy is null");
    if (!(policy->replaces().*replaced)) continue;
    if (owner) {
      throw std::invalid_argument("step policies '" + owner->name() + "' and '" + policy->name() + "' both replace " +
                                  hook + "; a training step takes one");
    }
    owner = policy.get();
  }
  return owner;
}

class TrainingWorkload final : public Workload, private StepState {
 public:
  TrainingWorkload(const SuiteContext& context, const TrainingSpec& spec)
      : spec_(spec),
        device_(context.device),
        optimizer_choice_(
            spec.optimizer.value_or(OptimizerChoice{OptimizerKind::sgd, pytorch_default_impl(context.device.type())})),
        image_size_(models::resolved_image_size(spec.model, spec.model_options)),
        model_(spec.build_model ? spec.build_model() : models::make_model(spec.model, spec.model_options)),
        inputs_owner_(owner_of(spec, "inputs", &StepPolicy::Replaces::inputs)),
        zero_grad_owner_(owner_of(spec, "zero_grad", &StepPolicy::Replaces::zero_grad)),
        micro_batches_owner_(owner_of(spec, "micro_batches", &StepPolicy::Replaces::micro_batches)),
        run_step_owner_(owner_of(spec, "run_step", &StepPolicy::Replaces::run_step)) {
    for (const auto& policy : spec.policies) keeps_loss_ = keeps_loss_ || policy->keeps_loss();
    micro_batches_ = micro_batches_owner_ ? micro_batches_owner_->micro_batches() : 1;
    module_ = model_.ptr();
    module_->to(device_);
    module_->train();
    parameters_ = models::count_parameters(*module_);
    // The optimizer is built after the model is final (device, memory format).
    optimizer_ = make_optimizer(optimizer_choice_, module_->parameters());
    if (micro_batches_ < 1 || spec.batch_size % micro_batches_ != 0) {
      throw std::invalid_argument("batch " + std::to_string(spec.batch_size) + " does not split into " +
                                  std::to_string(micro_batches_) + " equal micro-batches");
    }
    const auto options = torch::TensorOptions().device(device_);
    std::int64_t side = image_size_;
    for (const auto& policy : spec.policies) side = std::max(side, policy->largest_side(image_size_));
    images_ = torch::randn({spec.batch_size, 3, side, side}, options);
    classes_ = models::resolved_num_classes(spec.model, spec.model_options);
    labels_ = torch::randint(classes_, {spec.batch_size}, options.dtype(torch::kLong));
    // A policy feeding its own inputs makes them (ascending shapes start smaller).
    if (!inputs_owner_) fixed_inputs();
    if (spec.precision == Precision::fp16) scaler_.emplace(device_);
    for (const auto& policy : spec.policies) policy->prepare(*this);
  }

  void step() override {
    // The phases are RecordFunction scopes: free unless a profiler records (`run --explain`).
    const torch::Tensor loss = run_step_owner_ ? run_step_owner_->run_step(*this) : eager_step([&]() -> StepInputs {
      RECORD_USER_SCOPE("tipbench::data");
      return inputs_owner_ ? inputs_owner_->inputs(*this, measuring_) : fixed_inputs();
    }());
    for (const auto& policy : spec_.policies) policy->after_step(*this, loss);
  }

  std::int64_t samples_per_step() const override { return spec_.batch_size; }

  // The step touches nothing process-wide (autocast is entered and left inside it), so the next
  // trial of the arm may take the model, optimizer state and staged inputs over as they are.
  bool keep_between_trials() const override {
    return std::all_of(spec_.policies.begin(), spec_.policies.end(),
                       [](const auto& policy) { return policy->keeps_between_trials(); });
  }

  bool memory_in_private_pool() const override {
    return std::any_of(spec_.policies.begin(), spec_.policies.end(),
                       [](const auto& policy) { return policy->replays_a_graph(); });
  }

  int fixed_warmup_steps() const override {
    int steps = 0;
    for (const auto& policy : spec_.policies) steps = std::max(steps, policy->fixed_warmup_steps());
    return steps;
  }

  int timed_step_period() const override {
    int period = 1;
    for (const auto& policy : spec_.policies) period = std::max(period, policy->timed_step_period());
    return period;
  }

  void begin_measurement() override {
    measuring_ = true;
    skipped_before_ = scaler_ ? scaler_->skipped_steps() : 0;
    for (const auto& policy : spec_.policies) policy->begin_measurement(*this);
  }

  // fp16: the optimizer steps the loss scaler skipped (an inf or NaN gradient) while timed; then
  // what the policies measured.
  std::map<std::string, double> metrics() const override {
    std::map<std::string, double> out;
    if (scaler_) out["skipped_steps"] = static_cast<double>(scaler_->skipped_steps() - skipped_before_);
    for (const auto& policy : spec_.policies) out.merge(policy->metrics(*this));
    return out;
  }

  nlohmann::json info() const override {
    nlohmann::json out = {{"model", spec_.model},
                          {"parameters", parameters_},
                          {"batch_size", spec_.batch_size},
                          {"image_size", image_size_},
                          {"channels_last", spec_.model_options.channels_last},
                          {"precision", precision_name(spec_.precision)},
                          {"input_shapes", "fixed"}};
    // The optimizer, and the implementation Python's torch.optim would pick here (since schema
    // 1.10; before it, only an arm that set the optimizer recorded it, and the default was the loop).
    out["optimizer"] = optimizer_kind_name(optimizer_choice_.kind);
    out["optimizer_impl"] = optimizer_impl_name(optimizer_choice_.impl);
    out["pytorch_default_optimizer_impl"] = optimizer_impl_name(pytorch_default_impl(device_.type()));
    for (const auto& policy : spec_.policies) out.update(policy->info(*this));
    // Model FLOPs per sample (MFU's numerator, reports/mfu.h): a reference model as built, at its
    // counted size, on fixed input shapes; since schema 1.10.
    if (const auto* flops = reference_flops(spec_.model, image_size_);
        flops && !spec_.build_model && out.value("input_shapes", "") == "fixed") {
      out["training_flops_per_sample"] = flops->training_flops;
    }
    return out;
  }

 private:
  // StepState
  const TrainingSpec& spec() const override { return spec_; }
  const c10::Device& device() const override { return device_; }
  torch::nn::AnyModule& model() override { return model_; }
  torch::optim::Optimizer& optimizer() override { return *optimizer_; }
  std::int64_t image_size() const override { return image_size_; }
  std::int64_t classes() const override { return classes_; }
  std::int64_t micro_batches() const override { return micro_batches_; }
  const torch::Tensor& images() const override { return images_; }
  const torch::Tensor& labels() const override { return labels_; }

  torch::Tensor input_of(std::int64_t h, std::int64_t w) const override {
    auto x = images_.narrow(2, 0, h).narrow(3, 0, w);
    return spec_.model_options.channels_last ? x.contiguous(at::MemoryFormat::ChannelsLast) : x.contiguous();
  }

  StepInputs fixed_inputs() override {
    if (!fixed_input_.defined()) fixed_input_ = input_of(image_size_, image_size_);
    return {fixed_input_, labels_};
  }

  std::optional<std::string> capture_unsafe_reason() const override {
    for (const auto& policy : spec_.policies) {
      if (auto why = policy->capture_unsafe_reason()) return why;
    }
    if (spec_.precision == Precision::fp16) return "use the fp16 loss scaler (it synchronizes to skip steps)";
    return graph_capture_unsafe_reason(optimizer_choice_);
  }

  // Zero the gradients, forward and backward each micro-batch, step the optimizer. Returns the
  // step's loss (the micro-batches' mean), detached; summed only when a policy keeps the loss, so
  // no other arm times the extra additions.
  torch::Tensor eager_step(const StepInputs& in) override {
    const torch::Tensor& x = in.images;
    const torch::Tensor& labels = in.labels;
    {
      RECORD_USER_SCOPE("tipbench::zero_grad");
      if (zero_grad_owner_) {
        zero_grad_owner_->zero_grad(*this);
      } else {
        optimizer_->zero_grad(/*set_to_none=*/true);
      }
    }
    const std::int64_t k = micro_batches_, micro = spec_.batch_size / k;
    torch::Tensor total;
    for (std::int64_t i = 0; i < k; ++i) {
      torch::Tensor loss;
      {
        RECORD_USER_SCOPE("tipbench::forward");
        AutocastScope autocast(device_.type(), spec_.precision);
        auto out = model_.forward(k == 1 ? x : x.narrow(0, i * micro, micro));
        loss = torch::nn::functional::cross_entropy(out, k == 1 ? labels : labels.narrow(0, i * micro, micro));
      }
      if (k > 1) loss = loss / static_cast<double>(k);
      {
        RECORD_USER_SCOPE("tipbench::backward");
        (scaler_ ? scaler_->scale(loss) : loss).backward();
      }
      if (i == 0 || !keeps_loss_) {
        total = loss.detach();
      } else {
        total = total + loss.detach();
      }
    }
    RECORD_USER_SCOPE("tipbench::optimizer");
    if (!scaler_) {
      optimizer_->step();
      return total;
    }
    scaler_->step(*optimizer_);
    scaler_->update();
    return total;
  }

  TrainingSpec spec_;
  c10::Device device_;
  OptimizerChoice optimizer_choice_;
  std::int64_t image_size_;
  torch::nn::AnyModule model_;
  // The policies that replace a hook of the default step (nullptr: the default).
  StepPolicy* inputs_owner_;
  StepPolicy* zero_grad_owner_;
  StepPolicy* micro_batches_owner_;
  StepPolicy* run_step_owner_;
  bool keeps_loss_ = false;
  std::int64_t micro_batches_ = 1;
  std::shared_ptr<torch::nn::Module> module_;
  std::int64_t parameters_ = 0;
  std::int64_t classes_ = 0;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  torch::Tensor images_, labels_, fixed_input_;
  std::optional<LossScaler> scaler_;  // fp16 only
  bool measuring_ = false;
  std::int64_t skipped_before_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_training_workload(const SuiteContext& context, const TrainingSpec& spec) {
  return std::make_unique<TrainingWorkload>(context, spec);
}

std::vector<std::string> models_to_run(const SuiteContext& context, DefaultModels defaults) {
  if (!context.models.empty()) return context.models;
  if (!context.device.is_cuda()) {
    if (defaults.vit && defaults.vit_on_cpu) return {"small_cnn", "vit_ti_16"};
    return {"small_cnn"};
  }
  std::vector<std::string> out{context.quick ? "resnet18" : "resnet50"};
  if (defaults.vit) out.push_back(context.quick ? "vit_ti_16" : "vit_b_16");
  return out;
}

std::int64_t batch_size_for(const SuiteContext& context, const std::string& model) {
  if (context.batch_size > 0) return context.batch_size;
  const bool cuda = context.device.is_cuda();
  if (const auto* file = models::model_file(model)) {  // a user's model: the built-ins' batch of its size
    if (file->parameters <= 1'000'000) return cuda ? 256 : 32;
    if (file->parameters <= 15'000'000) return cuda ? 256 : 8;
    if (file->parameters <= 30'000'000) return cuda ? 128 : 4;
    return cuda ? 64 : 2;
  }
  if (model == "small_cnn") return cuda ? 256 : 32;
  if (model == "resnet18" || model == "resnet34" || model == "vit_ti_16") return cuda ? 256 : 8;
  if (model == "resnet50" || model == "vit_s_16") return cuda ? 128 : 4;
  return cuda ? 64 : 2;  // vit_b_16
}

Levels training_params(const SuiteContext& context, const std::string& model, std::int64_t quick_cpu_batch) {
  const bool small = quick_cpu_batch > 0 && context.quick && !context.device.is_cuda() && context.batch_size == 0;
  return {{"model", model}, {"batch", std::to_string(small ? quick_cpu_batch : batch_size_for(context, model))}};
}

std::vector<Levels> step_loop_params(const SuiteContext& context, const std::string& model) {
  constexpr std::int64_t kLaunchBoundBatch = 8;
  std::vector<Levels> out{training_params(context, model)};
  if (context.device.is_cuda() && context.batch_size == 0 && batch_size_for(context, model) > kLaunchBoundBatch) {
    out.push_back({{"model", model}, {"batch", std::to_string(kLaunchBoundBatch)}});
  }
  return out;
}

std::vector<CaseSpec> training_cases(const SuiteContext& context, const std::vector<ArmSpec>& arms,
                                     const std::vector<CaseAxis>& axes, TrainingCaseOptions options) {
  std::vector<CaseSpec> out;
  for (const auto& model : models_to_run(context, options.models)) {
    std::vector<Levels> cases = options.step_loop
                                    ? step_loop_params(context, model)
                                    : std::vector<Levels>{training_params(context, model, options.quick_cpu_batch)};
    for (const auto& axis : axes) {
      std::vector<Levels> product;
      for (const auto& params : cases) {
        for (const auto& value : axis.values) {
          product.push_back(params);
          product.back().emplace_back(axis.level, value);
        }
      }
      cases = std::move(product);
    }
    for (auto& params : cases) out.push_back({std::move(params), arms});
    if (options.largest_batch) out.push_back(largest_batch_case(model, arms));
  }
  return out;
}

TrainingSpec training_spec(const CaseSpec& c) {
  TrainingSpec spec;
  spec.model = level(c.params, "model");
  spec.batch_size = level_int(c.params, "batch");
  return spec;
}

std::string model_family(const std::string& model) {
  for (const auto& info : models::available_models()) {
    if (info.name == model) return info.family;
  }
  return "";
}

std::optional<std::string> model_code_fixed(const std::string& model, const std::string& change) {
  if (model_family(model) != "file") return std::nullopt;
  return model + " is a model file, run as written: this tip " + change + ", which needs the model's code";
}

}  // namespace tipbench::suites
