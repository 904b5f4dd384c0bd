// Checked by reading (no GPU here): NVML calls as torch/cuda/__init__.py makes them for
// torch.cuda.temperature/power_draw/clock_rate (nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU),
// nvmlDeviceGetPowerUsage in mW, nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM)), but with the device
// matched by PCI bus id (nvml_api.cpp) instead of torch's CUDA_VISIBLE_DEVICES parsing; the
// violation counters as DCGM reads DCGM_FI_DEV_POWER_VIOLATION/THERMAL_VIOLATION
// (nvmlDeviceGetViolationStatus, ns since the driver loaded: a difference over the run).
#include "tipbench/machine/gpu_conditions.h"

#include "nvml_api.h"

#include <unistd.h>

#include <algorithm>
#include <optional>

namespace tipbench {

namespace {

struct Sample {
  std::optional<unsigned long long> thermal_ns, power_ns;  // violation time, cumulative
  std::optional<unsigned int> sm_clock_mhz, temperature_c, power_mw;
  std::optional<int> other_processes;
  unsigned long long reasons = 0;
};

Sample sample(const Nvml& nvml, nvmlDevice_t gpu) {
  Sample s;
  if (nvml.violation_status != nullptr) {
    NvmlViolationTime t{};
    if (nvml.violation_status(gpu, kNvmlPerfPolicyThermal, &t) == kNvmlSuccess) s.thermal_ns = t.violationTime;
    if (nvml.violation_status(gpu, kNvmlPerfPolicyPower, &t) == kNvmlSuccess) s.power_ns = t.violationTime;
  }
  unsigned int value = 0;
  if (nvml.clock_info != nullptr && nvml.clock_info(gpu, kNvmlClockSm, &value) == kNvmlSuccess) s.sm_clock_mhz = value;
  if (nvml.temperature != nullptr && nvml.temperature(gpu, kNvmlTemperatureGpu, &value) == kNvmlSuccess) {
    s.temperature_c = value;
  }
  if (nvml.power_usage != nullptr && nvml.power_usage(gpu, &value) == kNvmlSuccess) s.power_mw = value;
  if (nvml.throttle_reasons != nullptr && nvml.throttle_reasons(gpu, &s.reasons) != kNvmlSuccess) s.reasons = 0;
  bool known = false;
  const auto processes = compute_processes_on(nvml, gpu, &known);
  if (known) {
    const auto self = static_cast<unsigned int>(getpid());
    s.other_processes = static_cast<int>(
        std::count_if(processes.begin(), processes.end(), [&](const NvmlProcessInfo& p) { return p.pid != self; }));
  }
  return s;
}

}  // namespace

struct GpuConditionsProbe::State {
  Nvml nvml;
  std::vector<NvmlGpu> gpus;
  std::vector<Sample> start;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

GpuConditionsProbe::GpuConditionsProbe(const std::string& device) {
  if (!device.starts_with("cuda")) return;
  const std::string index = device.find(':') == std::string::npos ? "0" : device.substr(device.find(':') + 1);
  state_ = std::make_unique<State>();
  if (!state_->nvml.initialised()) return;
  for (auto& gpu : gpus_to_check(state_->nvml)) {  // "GPU N (name)", numbered as CUDA numbers it
    if (gpu.label == "GPU " + index || gpu.label.starts_with("GPU " + index + " ")) state_->gpus.push_back(gpu);
  }
  for (const auto& gpu : state_->gpus) state_->start.push_back(sample(state_->nvml, gpu.handle));
  state_->started = std::chrono::steady_clock::now();
}

GpuConditionsProbe::~GpuConditionsProbe() = default;

std::vector<GpuConditions> GpuConditionsProbe::finish() const {
  std::vector<GpuConditions> out;
  if (!state_ || !state_->nvml.initialised()) return out;
  const double span_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - state_->started).count();
  for (std::size_t i = 0; i < state_->gpus.size(); ++i) {
    const Sample& a = state_->start[i];
    const Sample b = sample(state_->nvml, state_->gpus[i].handle);
    GpuConditions g;
    g.gpu = state_->gpus[i].label;
    if (b.sm_clock_mhz) g.sm_clock_mhz = *b.sm_clock_mhz;
    if (a.temperature_c || b.temperature_c)
      g.temperature_c = std::max(a.temperature_c.value_or(0), b.temperature_c.value_or(0));
    if (b.power_mw) g.power_w = *b.power_mw / 1000.0;
    const auto share = [&](const std::optional<unsigned long long>& from,
                           const std::optional<unsigned long long>& to) -> std::optional<double> {
      if (!from || !to || span_ns <= 0 || *to < *from) return std::nullopt;
      return std::min(1.0, static_cast<double>(*to - *from) / span_ns);
    };
    g.thermal_share = share(a.thermal_ns, b.thermal_ns);
    g.power_capped_share = share(a.power_ns, b.power_ns);
    if (a.other_processes || b.other_processes) {
      g.other_processes = std::max(a.other_processes.value_or(0), b.other_processes.value_or(0));
    }
    g.throttle_reasons = throttle_reason_texts(b.reasons);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace tipbench
