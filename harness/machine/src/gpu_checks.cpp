// The GPU checks of environment_warnings, through NVML loaded at run time (gpu_checks.h).
#include "gpu_checks.h"

#include "nvml_api.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace tipbench {

namespace {

std::string format_gib(unsigned long long bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1ULL << 30));
  return text;
}

void check_other_processes(const Nvml& nvml, const NvmlGpu& gpu, std::vector<std::string>& out) {
  bool known = false;
  const auto processes = compute_processes_on(nvml, gpu.handle, &known);
  if (!known) return;
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
  for (const auto& text : throttle_reason_texts(reasons)) active += (active.empty() ? "" : ", ") + text;
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
