// NVML (libnvidia-ml), loaded at run time when present: neither nvml.h nor the library is needed
// to build or run. The few declarations tipbench uses, from nvml.h (stable ABI since driver R450),
// and the GPUs this process uses matched to NVML by PCI bus id. Used by the environment checks
// (gpu_checks.cpp) and the conditions of measurement (gpu_conditions.cpp). Example:
//   const Nvml nvml;
//   if (nvml.initialised()) for (const auto& gpu : gpus_to_check(nvml)) use(gpu.handle);
#pragma once

#include <string>
#include <vector>

namespace tipbench {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;
constexpr int kNvmlClockSm = 1;          // nvmlClockType_t NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;   // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
constexpr int kNvmlPerfPolicyPower = 0;  // nvmlPerfPolicyType_t NVML_PERF_POLICY_POWER
constexpr int kNvmlPerfPolicyThermal = 1;

// nvmlViolationTime_t: how long a policy held the clocks below the application clocks.
struct NvmlViolationTime {
  unsigned long long referenceTime;  // a timestamp (us)
  unsigned long long violationTime;  // ns, counted since the driver loaded
};

// nvmlProcessInfo_v2_t: the layout used by both nvmlDeviceGetComputeRunningProcesses_v2 and _v3.
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE (all bits set)
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*) bits. GpuIdle (0x1),
// ApplicationsClocksSetting (0x2) and DisplayClockSetting (0x100) are settings or idleness, not
// problems, and are left out on purpose.
struct ThrottleReason {
  unsigned long long bit;
  const char* text;
};
constexpr ThrottleReason kThrottleReasons[] = {
    {0x4ULL, "software power cap"},         {0x8ULL, "hardware slowdown"},          {0x10ULL, "sync boost"},
    {0x20ULL, "software thermal slowdown"}, {0x40ULL, "hardware thermal slowdown"}, {0x80ULL, "hardware power brake"},
};

class Nvml {
 public:
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool loaded() const { return lib_ != nullptr; }
  bool initialised() const { return initialised_; }
  std::string init_error() const {
    if (init_ == nullptr || shutdown_ == nullptr) return "nvmlInit_v2 not found in libnvidia-ml";
    if (error_string != nullptr) return error_string(init_status_);
    return "NVML error " + std::to_string(init_status_);
  }

  using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*);
  using ClockFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
  using ReasonsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
  using TemperatureFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
  using PowerFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // milliwatts
  using ViolationFn = nvmlReturn_t (*)(nvmlDevice_t, int, NvmlViolationTime*);

  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  ProcessesFn compute_processes = nullptr;
  ClockFn clock_info = nullptr;
  ClockFn max_clock_info = nullptr;
  ReasonsFn throttle_reasons = nullptr;
  TemperatureFn temperature = nullptr;
  PowerFn power_usage = nullptr;
  ViolationFn violation_status = nullptr;

 private:
  template <class Fn>
  Fn sym(const char* symbol);

  void* lib_ = nullptr;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  nvmlReturn_t init_status_ = -1;
  bool initialised_ = false;
};

struct NvmlGpu {
  std::string label;  // "GPU 0 (NVIDIA H100 80GB HBM3)", numbered as CUDA numbers it here
  nvmlDevice_t handle = nullptr;
};

// The GPUs this process uses, matched to NVML by PCI bus id: NVML numbers GPUs in PCI order and
// ignores CUDA_VISIBLE_DEVICES, CUDA does neither. Without CUDA devices, every GPU NVML sees.
std::vector<NvmlGpu> gpus_to_check(const Nvml& nvml);

// The compute processes on the GPU (this one included); nothing when NVML cannot say.
std::vector<NvmlProcessInfo> compute_processes_on(const Nvml& nvml, nvmlDevice_t gpu, bool* known);

// The active reasons of kThrottleReasons in `reasons`, as their texts.
std::vector<std::string> throttle_reason_texts(unsigned long long reasons);

}  // namespace tipbench
