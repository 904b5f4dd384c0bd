#include "nvml_api.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

namespace tipbench {

template <class Fn>
Fn Nvml::sym(const char* symbol) {
  return reinterpret_cast<Fn>(dlsym(lib_, symbol));
}

Nvml::Nvml() {
  for (const char* name : {"libnvidia-ml.so.1", "libnvidia-ml.so"}) {
    lib_ = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
    if (lib_ != nullptr) break;
  }
  if (lib_ == nullptr) return;
  init_ = sym<int (*)()>("nvmlInit_v2");
  shutdown_ = sym<int (*)()>("nvmlShutdown");
  error_string = sym<const char* (*)(nvmlReturn_t)>("nvmlErrorString");
  device_count = sym<nvmlReturn_t (*)(unsigned int*)>("nvmlDeviceGetCount_v2");
  handle_by_index = sym<nvmlReturn_t (*)(unsigned int, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
  handle_by_pci_bus_id = sym<nvmlReturn_t (*)(const char*, nvmlDevice_t*)>("nvmlDeviceGetHandleByPciBusId_v2");
  name = sym<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int)>("nvmlDeviceGetName");
  compute_processes = sym<ProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3");
  if (compute_processes == nullptr) {
    compute_processes = sym<ProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v2");
  }
  clock_info = sym<ClockFn>("nvmlDeviceGetClockInfo");
  max_clock_info = sym<ClockFn>("nvmlDeviceGetMaxClockInfo");
  throttle_reasons = sym<ReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
  if (throttle_reasons == nullptr) {
    throttle_reasons = sym<ReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  temperature = sym<TemperatureFn>("nvmlDeviceGetTemperature");
  power_usage = sym<PowerFn>("nvmlDeviceGetPowerUsage");
  violation_status = sym<ViolationFn>("nvmlDeviceGetViolationStatus");
  if (init_ == nullptr || shutdown_ == nullptr) return;
  init_status_ = init_();
  initialised_ = init_status_ == kNvmlSuccess;
}

Nvml::~Nvml() {
  if (initialised_) shutdown_();
  if (lib_ != nullptr) dlclose(lib_);
}

std::vector<NvmlGpu> gpus_to_check(const Nvml& nvml) {
  std::vector<NvmlGpu> gpus;
  const auto add = [&](const std::string& index, nvmlDevice_t handle) {
    char name[96] = {};  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
    std::string label = "GPU " + index;
    if (nvml.name != nullptr && nvml.name(handle, name, sizeof(name)) == kNvmlSuccess) {
      label += " (" + std::string(name) + ")";
    }
    gpus.push_back({std::move(label), handle});
  };
  try {
    const int cuda_count = torch::cuda::is_available() ? torch::cuda::device_count() : 0;
    if (cuda_count > 0 && nvml.handle_by_pci_bus_id != nullptr) {
      for (int i = 0; i < cuda_count; ++i) {
        const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(i));
        char bus_id[32];  // NVML_DEVICE_PCI_BUS_ID_FMT
        std::snprintf(bus_id, sizeof(bus_id), "%08X:%02X:%02X.0", p->pciDomainID, p->pciBusID, p->pciDeviceID);
        nvmlDevice_t handle = nullptr;
        if (nvml.handle_by_pci_bus_id(bus_id, &handle) == kNvmlSuccess) {
          add(std::to_string(i), handle);
        }
      }
      return gpus;
    }
  } catch (const c10::Error&) {
    gpus.clear();  // CUDA could not describe its devices: fall back to what NVML sees
  }
  unsigned int count = 0;
  if (nvml.device_count == nullptr || nvml.handle_by_index == nullptr || nvml.device_count(&count) != kNvmlSuccess) {
    return gpus;
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t handle = nullptr;
    if (nvml.handle_by_index(i, &handle) == kNvmlSuccess) add("(NVML) " + std::to_string(i), handle);
  }
  return gpus;
}

std::vector<NvmlProcessInfo> compute_processes_on(const Nvml& nvml, nvmlDevice_t gpu, bool* known) {
  *known = false;
  std::vector<NvmlProcessInfo> processes;
  if (nvml.compute_processes == nullptr) return processes;
  // The list can grow between the two calls; retry a few times with room to spare.
  unsigned int count = 0;
  nvmlReturn_t status = nvml.compute_processes(gpu, &count, nullptr);
  for (int attempt = 0; attempt < 3 && status == kNvmlErrorInsufficientSize; ++attempt) {
    processes.resize(count + 8);
    count = static_cast<unsigned int>(processes.size());
    status = nvml.compute_processes(gpu, &count, processes.data());
  }
  if (status != kNvmlSuccess) return {};  // not supported here
  *known = true;
  processes.resize(std::min<std::size_t>(count, processes.size()));  // none running: count 0
  return processes;
}

std::vector<std::string> throttle_reason_texts(unsigned long long reasons) {
  std::vector<std::string> out;
  for (const auto& r : kThrottleReasons) {
    if ((reasons & r.bit) != 0) out.emplace_back(r.text);
  }
  return out;
}

}  // namespace tipbench
