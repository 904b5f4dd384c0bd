#include "autocast.h"

#include "tipbench/common/error_text.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <map>
#include <mutex>
#include <stdexcept>

namespace tipbench::suites {

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  return "?";
}

Precision parse_precision(const std::string& name) {
  for (Precision p : {Precision::fp32, Precision::bf16, Precision::fp16}) {
    if (name == precision_name(p)) return p;
  }
  throw std::invalid_argument("unknown precision '" + name + "'; valid: fp32, bf16, fp16");
}

AutocastState AutocastState::capture() {
  AutocastState s;
  s.cpu_enabled = at::autocast::is_autocast_enabled(at::kCPU);
  s.cuda_enabled = at::autocast::is_autocast_enabled(at::kCUDA);
  s.cpu_dtype = at::autocast::get_autocast_dtype(at::kCPU);
  s.cuda_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
  return s;
}

void AutocastState::apply() const {
  at::autocast::set_autocast_enabled(at::kCPU, cpu_enabled);
  at::autocast::set_autocast_enabled(at::kCUDA, cuda_enabled);
  at::autocast::set_autocast_dtype(at::kCPU, cpu_dtype);
  at::autocast::set_autocast_dtype(at::kCUDA, cuda_dtype);
}

AutocastScope::AutocastScope(c10::DeviceType device_type, Precision precision) {
  if (precision == Precision::fp32) return;  // nothing to do inside every fp32 training step
  before_ = AutocastState::capture();
  at::autocast::set_autocast_dtype(device_type, precision == Precision::bf16 ? at::kBFloat16 : at::kHalf);
  at::autocast::set_autocast_enabled(device_type, true);
  at::autocast::increment_nesting();
  entered_ = true;
}

AutocastScope::~AutocastScope() {
  if (!entered_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  before_.apply();
}

namespace {

std::optional<std::string> probe_cpu_training_step(Precision precision) {
  try {
    torch::AutoGradMode grad_on(true);
    auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).bias(false));
    auto bn = torch::nn::BatchNorm2d(8);
    auto fc = torch::nn::Linear(8, 4);
    auto x = torch::randn({2, 3, 8, 8});
    torch::Tensor loss;
    {
      AutocastScope scope(c10::kCPU, precision);
      auto h = torch::relu(bn(conv(x))).mean({2, 3});
      loss = torch::nn::functional::cross_entropy(fc(h), torch::tensor({0, 1}));
    }
    loss.backward();
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string("a training step under CPU autocast to ") + precision_name(precision) +
           " fails in this LibTorch: " + error_summary(e);
  }
}

}  // namespace

std::optional<std::string> precision_unsupported_reason(const c10::Device& device, Precision precision) {
  if (precision == Precision::fp32) return std::nullopt;
  if (!device.is_cpu()) {
    if (!at::autocast::is_autocast_available(device.type())) {
      return "this LibTorch has no autocast for " + device.str();
    }
    return std::nullopt;
  }
  static std::mutex mutex;
  static std::map<Precision, std::optional<std::string>> probed;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = probed.find(precision);
  if (it == probed.end()) it = probed.emplace(precision, probe_cpu_training_step(precision)).first;
  return it->second;
}

}  // namespace tipbench::suites
