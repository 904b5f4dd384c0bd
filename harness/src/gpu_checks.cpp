// The GPU checks of environment_warnings, through NVML loaded at run time (gpu_checks.h).
#include "gpu_checks.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace tipbench {

namespace {

// The few NVML declarations we need, from nvml.h (stable ABI since driver R450), so that nvml.h
// is not needed to build and libnvidia-ml is not needed to run.

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;
constexpr int kNvmlClockSm = 1;  // nvmlClockType_t NVML_CLOCK_SM

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
  Nvml() {
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
    if (init_ == nullptr || shutdown_ == nullptr) return;
    init_status_ = init_();
    initialised_ = init_status_ == kNvmlSuccess;
  }
  ~Nvml() {
    if (initialised_) shutdown_();
    if (lib_ != nullptr) dlclose(lib_);
  }
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

  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  ProcessesFn compute_processes = nullptr;
  ClockFn clock_info = nullptr;
  ClockFn max_clock_info = nullptr;
  ReasonsFn throttle_reasons = nullptr;

 private:
  template <class Fn>
  Fn sym(const char* symbol) {
    return reinterpret_cast<Fn>(dlsym(lib_, symbol));
  }

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

std::string format_gib(unsigned long long bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1ULL << 30));
  return text;
}

void check_other_processes(const Nvml& nvml, const NvmlGpu& gpu, std::vector<std::string>& out) {
  if (nvml.compute_processes == nullptr) return;
  // The list can grow between the two calls; retry a few times with room to spare.
  std::vector<NvmlProcessInfo> processes;
  unsigned int count = 0;
  nvmlReturn_t status = nvml.compute_processes(gpu.handle, &count, nullptr);
  for (int attempt = 0; attempt < 3 && status == kNvmlErrorInsufficientSize; ++attempt) {
    processes.resize(count + 8);
    count = static_cast<unsigned int>(processes.size());
    status = nvml.compute_processes(gpu.handle, &count, processes.data());
  }
  if (status != kNvmlSuccess) return;  // none running (count 0), or not supported here
  processes.resize(std::min<std::size_t>(count, processes.size()));

  const auto self = static_cast<unsigned int>(getpid());
  std::string pids;
  int others = 0;
  unsigned long long memory = 0;
  for (const auto& p : processes) {
    if (p.pid == self) continue;
    ++others;
    if (!pids.empty()) pids += ", ";
    pids += std::to_string(p.pid);
    if (p.usedGpuMemory != ~0ULL) memory += p.usedGpuMemory;  // NVML_VALUE_NOT_AVAILABLE
  }
  if (others == 0) return;
  out.push_back(gpu.label + " is in use by " + std::to_string(others) + " other process" + (others > 1 ? "es" : "") +
                " (pid " + pids + (memory > 0 ? ", " + format_gib(memory) : "") +
                "): they compete for SMs and memory bandwidth, so timings are noisy; stop them or "
                "run on an idle GPU (CUDA_VISIBLE_DEVICES).");
}

void check_throttling(const Nvml& nvml, const NvmlGpu& gpu, std::vector<std::string>& out) {
  if (nvml.throttle_reasons == nullptr) return;
  unsigned long long reasons = 0;
  if (nvml.throttle_reasons(gpu.handle, &reasons) != kNvmlSuccess) return;
  std::string active;
  for (const auto& r : kThrottleReasons) {
    if ((reasons & r.bit) == 0) continue;
    if (!active.empty()) active += ", ";
    active += r.text;
  }
  if (active.empty()) return;
  std::string clocks;
  unsigned int sm = 0, sm_max = 0;
  if (nvml.clock_info != nullptr && nvml.max_clock_info != nullptr &&
      nvml.clock_info(gpu.handle, kNvmlClockSm, &sm) == kNvmlSuccess &&
      nvml.max_clock_info(gpu.handle, kNvmlClockSm, &sm_max) == kNvmlSuccess && sm_max > 0) {
    clocks = "; SM clock " + std::to_string(sm) + " of " + std::to_string(sm_max) + " MHz";
  }
  out.push_back(gpu.label + " is throttling its clocks (" + active + clocks +
                "), so timings will be low and drift; check cooling and power limits with "
                "`nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE` and wait until it clears "
                "before measuring.");
}

}  // namespace

void check_gpus(std::vector<std::string>& out) {
  const Nvml nvml;
  if (!nvml.loaded()) {
    out.push_back(
        "GPU clocks, throttling and other GPU processes could not be checked (NVML, "
        "libnvidia-ml.so.1, not found); install the NVIDIA driver's NVML library or put it on "
        "the loader path (LD_LIBRARY_PATH) to enable these checks.");
    return;
  }
  if (!nvml.initialised()) {
    out.push_back(
        "GPU clocks, throttling and other GPU processes could not be checked (NVML "
        "failed to initialise: " +
        nvml.init_error() + "); check the NVIDIA driver installation with `nvidia-smi`.");
    return;
  }
  for (const auto& gpu : gpus_to_check(nvml)) {
    check_other_processes(nvml, gpu, out);
    check_throttling(nvml, gpu, out);
  }
}

}  // namespace tipbench
