#include "device_choice.h"

#include <fmt/format.h>
#include <torch/cuda.h>

#include <stdexcept>

namespace tipbench::cli {

std::optional<c10::Device> resolve_device(const std::string& name, std::string& error) {
  const bool have_cuda = torch::cuda::is_available();
  if (name == "auto") return have_cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  try {
    c10::Device device(name);
    if (!device.is_cpu() && !device.is_cuda()) throw std::invalid_argument("unsupported");
    if (device.is_cuda() && !have_cuda) {
      error = fmt::format("--device {}: no CUDA device is available here (use --device cpu or auto)", name);
      return std::nullopt;
    }
    if (device.is_cuda() && !device.has_index()) device.set_index(0);
    if (device.is_cuda() && device.index() >= static_cast<int>(torch::cuda::device_count())) {
      error = fmt::format("--device {}: only {} CUDA device(s) present", name, torch::cuda::device_count());
      return std::nullopt;
    }
    return device;
  } catch (const std::exception&) {
    error = fmt::format("--device {}: expected auto, cpu, cuda or cuda:N", name);
    return std::nullopt;
  }
}

}  // namespace tipbench::cli
