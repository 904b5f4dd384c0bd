// The optimizer step in three implementations that compute the same update:
//   loop     LibTorch's torch::optim (one set of kernels per parameter: what C++ users get, and
//            Python's torch.optim on a CPU)
//   foreach  ATen's multi-tensor _foreach_* ops (one launch per op over all parameters; Python's
//            default on CUDA since 2.0)
//   fused    ATen's _fused_sgd_ / _fused_adamw_ (the whole update in one kernel per chunk)
// for SGD with momentum and AdamW with PyTorch's default hyperparameters. Example:
//   auto opt = make_optimizer({OptimizerKind::adamw, OptimizerImpl::fused}, model->parameters());
//   opt->zero_grad();  loss.backward();  opt->step();
#pragma once

#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

enum class OptimizerKind { sgd, adamw };
enum class OptimizerImpl { loop, foreach, fused };

struct OptimizerChoice {
  OptimizerKind kind = OptimizerKind::sgd;
  OptimizerImpl impl = OptimizerImpl::loop;
};

// SGD: lr 0.01, momentum 0.9. AdamW: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 1e-2.
struct SgdSettings {
  double lr = 0.01, momentum = 0.9;
};
struct AdamWSettings {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2;
};

// The implementation Python's torch.optim.SGD/AdamW step with when neither foreach nor fused is
// given, for parameters on `device`: foreach where PyTorch has foreach kernels for the device type
// (cuda, xpu, mtia, the PrivateUse1 backend), else the per-parameter loop; never fused (PyTorch
// gives the fused kernels "bake-in time" first). The rule of _default_to_fused_or_foreach
// (torch/optim/optimizer.py) with use_fused=False, as sgd.py and adam.py call it, and the list of
// _get_foreach_kernels_supported_devices (torch/utils/_foreach_utils.py); a test asks the
// project's Python for both.
OptimizerImpl pytorch_default_impl(c10::DeviceType device);

const char* optimizer_kind_name(OptimizerKind kind);  // "sgd", "adamw"
const char* optimizer_impl_name(OptimizerImpl impl);  // "loop", "foreach", "fused"
// Both throw std::invalid_argument naming the valid names.
OptimizerKind parse_optimizer_kind(const std::string& name);
OptimizerImpl parse_optimizer_impl(const std::string& name);

// Parameters without a gradient at step() are left alone, as torch::optim does. All parameters
// must be on one device and of one dtype (what the foreach and fused kernels group by).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(OptimizerChoice choice, std::vector<torch::Tensor> params);

// SGD with momentum (SgdSettings) as Python's torch.optim.SGD steps the parameters by default on
// their device (pytorch_default_impl of the first one's; the loop for none): every training
// workload's optimizer unless its arm sets another.
std::unique_ptr<torch::optim::Optimizer> make_default_sgd(std::vector<torch::Tensor> params);
// What an arm's info records of that step: {"optimizer": "sgd", "optimizer_impl": "foreach"}.
nlohmann::json default_sgd_info(const c10::Device& device);

// Why a step of `choice` would be wrong inside a captured CUDA graph; nullopt when it is safe.
// The loop and foreach AdamW take bias correction from a step count kept on the host, which a
// graph freezes at its capture value: every replay would use the same correction. Python's
// torch.optim.AdamW refuses capture unless capturable=True, which keeps the count in a device
// tensor (torch/optim/adam.py `_cuda_graph_capture_health_check`, `_single_tensor_adam`'s
// capturable branch); the fused AdamW here does that (a float32 step tensor per parameter,
// incremented on the device), and SGD has no step count.
std::optional<std::string> graph_capture_unsafe_reason(OptimizerChoice choice);

// Why `impl` of `kind` cannot step float parameters on `device` in this LibTorch (the fused
// kernels are a fact of the build: tried once per device type and kind); nullopt when it can.
std::optional<std::string> optimizer_unsupported_reason(const c10::Device& device, OptimizerChoice choice);

}  // namespace tipbench::suites
