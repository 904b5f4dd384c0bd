// Mixed precision for a training step: the precision an arm trains in, and autocast entered and
// left like Python's `with torch.autocast(...)` (LibTorch has no RAII guard). Example:
//   { AutocastScope amp(device.type(), Precision::bf16);  loss = criterion(model(x), y); }
//   loss.backward();   // outside the scope, as PyTorch recommends
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace tipbench::suites {

enum class Precision {
  fp32,  // no autocast: PyTorch's default
  bf16,  // autocast to bfloat16: fp32's range, no loss scaling needed
  fp16,  // autocast to float16 with dynamic loss scaling (common/loss_scaler.h)
};

const char* precision_name(Precision precision);  // "fp32", "bf16", "fp16"
// Throws std::invalid_argument naming the valid names.
Precision parse_precision(const std::string& name);

// Autocast flags and dtypes of this thread, for the two device types training runs on.
struct AutocastState {
  bool cpu_enabled = false, cuda_enabled = false;
  c10::ScalarType cpu_dtype = c10::kBFloat16, cuda_dtype = c10::kHalf;

  static AutocastState capture();
  void apply() const;
  bool any() const { return cpu_enabled || cuda_enabled; }
};

// Autocast on `device_type` to the precision's dtype for the scope's lifetime (nothing for fp32).
// Leaving the outermost scope clears the cache of casted weights, as torch.autocast's __exit__
// does: stale casts would survive the optimizer step otherwise (pytorch/pytorch#32140). The
// thread's previous autocast state comes back.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device_type, Precision precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  AutocastState before_;
  bool entered_ = false;
};

// Why a training step cannot run in `precision` on `device`; nullopt when it can. On the CPU a
// small conv net is trained one step under autocast to find out (once per precision and
// process): whether the CPU kernels of this LibTorch cover the dtype is a fact of the build.
std::optional<std::string> precision_unsupported_reason(const c10::Device& device, Precision precision);

}  // namespace tipbench::suites
