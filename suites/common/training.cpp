#include "training.h"

#include "captured_step.h"
#include "device_memory.h"
#include "loss_scaler.h"

#include <torch/torch.h>

#include <array>
#include <map>
#include <optional>
#include <stdexcept>

namespace tipbench::suites {

namespace {

// (height, width) of timed step i in the varying-shapes schedule: 17 x 17 distinct sizes around
// the model's size, so up to 289 steps never repeat a shape (later steps wrap around).
std::pair<std::int64_t, std::int64_t> varying_shape(std::int64_t base, std::int64_t i) {
  constexpr std::int64_t kSizes = 17;
  const std::int64_t stride = std::max<std::int64_t>(1, base / 28);  // 8 px at 224
  auto size = [&](std::int64_t k) { return base + stride * (k - kSizes / 2); };
  return {size(i % kSizes), size((i / kSizes) % kSizes)};
}

// What the CUDA-graph variant of the step cannot capture: per-step host work, synchronisation.
void check_capturable(const TrainingSpec& spec) {
  auto refuse = [](const std::string& what) {
    throw std::invalid_argument("a training step captured as a CUDA graph cannot " + what);
  };
  if (spec.shapes != InputShapes::fixed) refuse("change its input shape");
  if (spec.step_tensors != StepTensors::staged) refuse("make new tensors every step");
  if (spec.loss_read_every) refuse("keep the loss (read it from the static loss tensor instead)");
  if (spec.precision == Precision::fp16) refuse("use the fp16 loss scaler (it synchronizes to skip steps)");
  if (auto why = graph_capture_unsafe_reason(spec.optimizer)) refuse(*why);
}

class TrainingWorkload final : public Workload {
 public:
  TrainingWorkload(const SuiteContext& context, const TrainingSpec& spec)
      : spec_(spec),
        device_(context.device),
        image_size_(models::resolved_image_size(spec.model, spec.model_options)),
        model_(spec.build_model ? spec.build_model() : models::make_model(spec.model, spec.model_options)) {
    module_ = model_.ptr();
    module_->to(device_);
    module_->train();
    parameters_ = models::count_parameters(*module_);
    // The optimizer is built after the model is final (device, memory format).
    optimizer_ = make_optimizer(spec.optimizer, module_->parameters());
    if (spec.micro_batches < 1 || spec.batch_size % spec.micro_batches != 0) {
      throw std::invalid_argument("batch " + std::to_string(spec.batch_size) + " does not split into " +
                                  std::to_string(spec.micro_batches) + " equal micro-batches");
    }
    const auto options = torch::TensorOptions().device(device_);
    // Staged once at the largest size the schedule uses; every step's input is cut from it.
    const std::int64_t side = spec.shapes == InputShapes::varying
                                  ? image_size_ + 8 * std::max<std::int64_t>(1, image_size_ / 28)
                                  : image_size_;
    images_ = torch::randn({spec.batch_size, 3, side, side}, options);
    classes_ = models::resolved_num_classes(spec.model, spec.model_options);
    labels_ = torch::randint(classes_, {spec.batch_size}, options.dtype(torch::kLong));
    const std::int64_t first_side = spec.shapes == InputShapes::ascending ? ascending_side(image_size_, 0) : image_size_;
    fixed_input_ = input_of(first_side, first_side);
    if (spec.precision == Precision::fp16) scaler_.emplace(device_);
    if (spec.loss_read_every) running_loss_ = torch::zeros({}, options);
    if (spec.preallocate) preallocate();
    if (spec.cuda_graph) {
      check_capturable(spec);
      graph_.emplace(device_, [this] { eager_step(fixed_input_, labels_); }, 3,
                     [this] { optimizer_->zero_grad(/*set_to_none=*/true); });
    }
  }

  void step() override {
    if (graph_) {
      graph_->replay();
      return;
    }
    torch::Tensor x = fixed_input_;
    if (measuring_ && spec_.shapes == InputShapes::varying) {
      const auto [h, w] = varying_shape(image_size_, timed_steps_++);
      x = input_of(h, w);
    } else if (measuring_ && spec_.shapes == InputShapes::ascending) {
      const std::int64_t side = ascending_side(image_size_, timed_steps_++);
      x = input_of(side, side);
    }
    torch::Tensor labels = labels_;
    if (spec_.step_tensors != StepTensors::staged) {
      const bool on_host = spec_.step_tensors == StepTensors::host;
      const auto made_on = torch::TensorOptions().device(on_host ? c10::Device(c10::kCPU) : device_);
      labels = torch::randint(classes_, {spec_.batch_size}, made_on.dtype(torch::kLong)).to(device_);
      x = x + 0.01 * torch::randn(x.sizes(), made_on).to(device_);
    }
    const torch::Tensor loss = eager_step(x, labels);
    if (spec_.loss_read_every) {
      running_loss_ += loss;
      if (*spec_.loss_read_every > 0 && ++steps_since_read_ == *spec_.loss_read_every) {
        last_read_loss_ = running_loss_.item<double>();  // the host waits for the device here
        steps_since_read_ = 0;
      }
    }
  }

  std::int64_t samples_per_step() const override { return spec_.batch_size; }

  void begin_measurement() override {
    measuring_ = true;
    skipped_before_ = scaler_ ? scaler_->skipped_steps() : 0;
    mallocs_before_ = device_malloc_calls(device_);
  }

  // fp16: the optimizer steps the loss scaler skipped (an inf or NaN gradient) while timed.
  // Ascending shapes on CUDA: the device allocations the caching allocator made while timed.
  std::map<std::string, double> metrics() const override {
    std::map<std::string, double> out;
    if (scaler_) out["skipped_steps"] = static_cast<double>(scaler_->skipped_steps() - skipped_before_);
    if (spec_.shapes == InputShapes::ascending && device_.is_cuda()) {
      out["device_mallocs"] = static_cast<double>(device_malloc_calls(device_) - mallocs_before_);
    }
    return out;
  }

  nlohmann::json info() const override {
    nlohmann::json out = {{"model", spec_.model},
            {"parameters", parameters_},
            {"batch_size", spec_.batch_size},
            {"image_size", image_size_},
            {"channels_last", spec_.model_options.channels_last},
            {"precision", precision_name(spec_.precision)},
            {"input_shapes", input_shapes_name(spec_.shapes)}};
    // The step-loop knobs, recorded where an arm sets them (older results keep their shape).
    if (spec_.optimizer.kind != OptimizerKind::sgd || spec_.optimizer.impl != OptimizerImpl::loop) {
      out["optimizer"] = optimizer_kind_name(spec_.optimizer.kind);
      out["optimizer_impl"] = optimizer_impl_name(spec_.optimizer.impl);
    }
    if (spec_.micro_batches > 1) out["micro_batches"] = spec_.micro_batches;
    if (spec_.loss_read_every) out["loss_read_every"] = *spec_.loss_read_every;
    if (spec_.step_tensors != StepTensors::staged) out["step_tensors"] = step_tensors_name(spec_.step_tensors);
    if (graph_) out["cuda_graph"] = true;
    if (spec_.preallocate) out["preallocated"] = true;
    return out;
  }

 private:
  // A contiguous (batch, 3, h, w) input cut from the staged images (a copy on the device; the
  // same cost in every arm of a case).
  torch::Tensor input_of(std::int64_t h, std::int64_t w) const {
    auto x = images_.narrow(2, 0, h).narrow(3, 0, w);
    return spec_.model_options.channels_last ? x.contiguous(at::MemoryFormat::ChannelsLast)
                                             : x.contiguous();
  }

  void preallocate() {
    const std::int64_t micro = spec_.batch_size / spec_.micro_batches;
    preallocate_step(model_, input_of(image_size_, image_size_).narrow(0, 0, micro), labels_.narrow(0, 0, micro),
                     spec_.precision);
  }

  // Zero the gradients, forward and backward each micro-batch, step the optimizer. Returns the
  // step's loss (the micro-batches' mean), detached; summed only when the loss is kept, so no
  // other arm times the extra additions.
  torch::Tensor eager_step(const torch::Tensor& x, const torch::Tensor& labels) {
    optimizer_->zero_grad(spec_.set_to_none);
    const std::int64_t k = spec_.micro_batches, micro = spec_.batch_size / k;
    torch::Tensor total;
    for (std::int64_t i = 0; i < k; ++i) {
      torch::Tensor loss;
      {
        AutocastScope autocast(device_.type(), spec_.precision);
        auto out = model_.forward(k == 1 ? x : x.narrow(0, i * micro, micro));
        loss = torch::nn::functional::cross_entropy(out, k == 1 ? labels : labels.narrow(0, i * micro, micro));
      }
      if (k > 1) loss = loss / static_cast<double>(k);
      (scaler_ ? scaler_->scale(loss) : loss).backward();
      if (i == 0 || !spec_.loss_read_every) {
        total = loss.detach();
      } else {
        total = total + loss.detach();
      }
    }
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
  std::int64_t image_size_;
  torch::nn::AnyModule model_;
  std::shared_ptr<torch::nn::Module> module_;
  std::int64_t parameters_ = 0;
  std::int64_t classes_ = 0;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  torch::Tensor images_, labels_, fixed_input_;
  std::optional<LossScaler> scaler_;  // fp16 only
  std::optional<CapturedStep> graph_;  // cuda_graph only
  torch::Tensor running_loss_;         // loss_read_every only
  std::int64_t steps_since_read_ = 0;
  double last_read_loss_ = 0;
  bool measuring_ = false;
  std::int64_t timed_steps_ = 0;
  std::int64_t skipped_before_ = 0;
  std::int64_t mallocs_before_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_training_workload(const SuiteContext& context, const TrainingSpec& spec) {
  return std::make_unique<TrainingWorkload>(context, spec);
}

void preallocate_step(torch::nn::AnyModule& model, const torch::Tensor& input, const torch::Tensor& labels,
                      Precision precision) {
  const auto module = model.ptr();
  std::vector<torch::Tensor> buffers;
  for (const auto& b : module->buffers()) buffers.push_back(b.clone());
  torch::Tensor loss;
  {
    AutocastScope autocast(input.device().type(), precision);
    loss = torch::nn::functional::cross_entropy(model.forward(input), labels);
  }
  loss.backward();
  module->zero_grad(/*set_to_none=*/true);
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (auto& b : module->buffers()) b.copy_(buffers[i++]);
}

std::int64_t ascending_side(std::int64_t base, std::int64_t step) {
  const std::int64_t smallest = base / 2;
  return smallest + (base - smallest) * (step % kAscendingSteps) / (kAscendingSteps - 1);
}

const char* input_shapes_name(InputShapes shapes) {
  switch (shapes) {
    case InputShapes::fixed: return "fixed";
    case InputShapes::varying: return "varying";
    case InputShapes::ascending: return "ascending";
  }
  return "?";
}

const char* step_tensors_name(StepTensors where) {
  switch (where) {
    case StepTensors::staged: return "staged";
    case StepTensors::host: return "host";
    case StepTensors::device: return "device";
  }
  return "?";
}

std::vector<std::string> models_to_run(const SuiteContext& context) {
  if (!context.models.empty()) return context.models;
  if (!context.device.is_cuda()) return {"small_cnn"};
  return {context.quick ? "resnet18" : "resnet50"};
}

std::int64_t batch_size_for(const SuiteContext& context, const std::string& model) {
  if (context.batch_size > 0) return context.batch_size;
  const bool cuda = context.device.is_cuda();
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

TrainingSpec training_spec(const CaseSpec& c) {
  TrainingSpec spec;
  spec.model = level(c.params, "model");
  spec.batch_size = std::stoll(level(c.params, "batch"));
  return spec;
}

std::string model_family(const std::string& model) {
  for (const auto& info : models::available_models()) {
    if (info.name == model) return info.family;
  }
  return "";
}

}  // namespace tipbench::suites
