#include "time_to_accuracy.h"

#include "lr_schedule.h"
#include "tipbench/models/model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace tipbench::suites {

namespace {

class TimeToAccuracyWorkload final : public Workload {
 public:
  TimeToAccuracyWorkload(const SuiteContext& context, const TimeToAccuracySpec& spec)
      : spec_(spec), device_(context.device), data_(make_learnable_data(spec.data, device_)) {
    TORCH_CHECK(spec.batch_size >= 1 && spec.batch_size <= spec.data.train_samples, "batch ", spec.batch_size,
                " must be in [1, ", spec.data.train_samples, "] (the training set)");
    steps_per_epoch_ = spec.data.train_samples / spec.batch_size;  // the last partial batch is dropped
    warmup_steps_ = static_cast<std::int64_t>(std::llround(spec.warmup_epochs * steps_per_epoch_));
    restart();
  }

  // One epoch: every training batch in a fresh shuffled order, then the test accuracy.
  void step() override {
    model_.ptr()->train();
    const auto order = torch::randperm(spec_.data.train_samples, shuffle_, torch::kLong).to(device_);
    for (std::int64_t i = 0; i < steps_per_epoch_; ++i) {
      const auto index = order.narrow(0, i * spec_.batch_size, spec_.batch_size);
      optimizer_->zero_grad();
      auto logits = model_.forward(data_.train_images.index_select(0, index));
      torch::nn::functional::cross_entropy(logits, data_.train_labels.index_select(0, index)).backward();
      optimizer_->step();
      scheduler_->step();
    }
    const double accuracy = test_accuracy();  // reads on the host: the epoch has finished here
    if (!measuring_) return;
    curve_.push_back(accuracy);
    if (!epochs_to_target_ && accuracy >= spec_.target_accuracy) {
      epochs_to_target_ = static_cast<std::int64_t>(curve_.size());
      seconds_to_target_ = std::chrono::duration<double>(Clock::now() - started_).count();
    }
  }

  std::int64_t samples_per_step() const override { return steps_per_epoch_ * spec_.batch_size; }

  // One untimed epoch warms the allocator and kernels (many steps); waiting for epoch times to
  // settle would train several epochs that begin_measurement() throws away.
  int fixed_warmup_steps() const override { return 1; }

  // Training starts again from fresh weights: the timed epochs are a whole run from scratch.
  void begin_measurement() override {
    restart();
    measuring_ = true;
    started_ = Clock::now();
  }

  nlohmann::json info() const override {
    return {{"model", spec_.model},
            {"parameters", parameters_},
            {"batch_size", spec_.batch_size},
            {"peak_lr", spec_.peak_lr},
            {"warmup_epochs", spec_.warmup_epochs},
            {"warmup_steps", warmup_steps_},
            {"schedule_epochs", spec_.schedule_epochs},
            {"steps_per_epoch", steps_per_epoch_},
            {"target_accuracy", spec_.target_accuracy},
            {"optimizer", "SGD momentum 0.9, weight decay 5e-4"},
            {"dataset", spec_.data}};
  }

  std::map<std::string, double> metrics() const override {
    std::map<std::string, double> m;
    m["seed"] = static_cast<double>(spec_.seed);
    m["reached_target"] = epochs_to_target_ ? 1.0 : 0.0;
    if (epochs_to_target_) {
      m["epochs_to_target"] = static_cast<double>(*epochs_to_target_);
      m["seconds_to_target"] = seconds_to_target_;
    }
    if (!curve_.empty()) {
      m["best_accuracy"] = *std::max_element(curve_.begin(), curve_.end());
      m["final_accuracy"] = curve_.back();
    }
    for (std::size_t e = 0; e < curve_.size(); ++e) m[fmt::format("accuracy_at_epoch_{:03}", e + 1)] = curve_[e];
    return m;
  }

 private:
  using Clock = std::chrono::steady_clock;

  void restart() {
    torch::manual_seed(spec_.seed);
    shuffle_ = at::make_generator<at::CPUGeneratorImpl>(spec_.seed);
    models::ModelOptions options{.num_classes = spec_.data.classes, .image_size = spec_.data.image_size};
    scheduler_.reset();  // it refers to the optimizer replaced below
    model_ = models::make_model(spec_.model, options);
    model_.ptr()->to(device_);
    parameters_ = models::count_parameters(*model_.ptr());
    // torch::optim's loop on every device: the recipe's weight decay is one tipbench's foreach
    // SGD (common/optimizers.h) does not have, and time to accuracy is dominated by the epochs.
    optimizer_ = std::make_unique<torch::optim::SGD>(
        model_.ptr()->parameters(), torch::optim::SGDOptions(spec_.peak_lr).momentum(0.9).weight_decay(5e-4));
    scheduler_ = std::make_unique<WarmupCosineLR>(
        *optimizer_,
        WarmupCosineOptions{.warmup_steps = warmup_steps_,
                            .total_steps = std::max(warmup_steps_, spec_.schedule_epochs * steps_per_epoch_)});
    curve_.clear();
    epochs_to_target_.reset();
    seconds_to_target_ = 0;
  }

  double test_accuracy() {
    torch::NoGradGuard no_grad;
    model_.ptr()->eval();
    constexpr std::int64_t kChunk = 1024;
    const std::int64_t n = spec_.data.test_samples;
    auto correct = torch::zeros({}, torch::TensorOptions().device(device_).dtype(torch::kLong));
    for (std::int64_t i = 0; i < n; i += kChunk) {
      const std::int64_t len = std::min(kChunk, n - i);
      auto predicted = model_.forward(data_.test_images.narrow(0, i, len)).argmax(1);
      correct += predicted.eq(data_.test_labels.narrow(0, i, len)).sum();
    }
    return static_cast<double>(correct.item<std::int64_t>()) / static_cast<double>(n);
  }

  TimeToAccuracySpec spec_;
  c10::Device device_;
  LearnableData data_;
  std::int64_t steps_per_epoch_ = 0;
  std::int64_t warmup_steps_ = 0;
  std::int64_t parameters_ = 0;
  at::Generator shuffle_;
  torch::nn::AnyModule model_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::unique_ptr<WarmupCosineLR> scheduler_;
  bool measuring_ = false;
  Clock::time_point started_;
  std::vector<double> curve_;
  std::optional<std::int64_t> epochs_to_target_;
  double seconds_to_target_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_time_to_accuracy_workload(const SuiteContext& context, const TimeToAccuracySpec& spec) {
  return std::make_unique<TimeToAccuracyWorkload>(context, spec);
}

}  // namespace tipbench::suites
