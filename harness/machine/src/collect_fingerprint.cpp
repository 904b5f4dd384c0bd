#include "tipbench/machine/collect_fingerprint.h"

#include "tipbench/common/text.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/cuda/nccl.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <string_view>
#include <utility>

#ifndef TIPBENCH_BUILD_TYPE
#define TIPBENCH_BUILD_TYPE ""
#endif

namespace tipbench {
namespace {

using detail::squeeze_spaces;
using detail::to_lower;
using detail::trim;

std::string version_string(long major, long minor, long patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// ---------------------------------------------------------------------------------------------
// Host facts.

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return trim(line);
}

// aarch64 /proc/cpuinfo has no "model name", only implementer/part codes; this names the parts
// found next to NVIDIA GPUs (Grace is a Neoverse-V2) and leaves the codes for the rest.
std::string arm_cpu_name(const std::string& implementer, const std::string& part) {
  static const std::map<std::string, std::string> implementers = {
      {"0x41", "ARM"}, {"0x4e", "NVIDIA"}, {"0xc0", "Ampere"}, {"0x61", "Apple"}};
  static const std::map<std::pair<std::string, std::string>, std::string> parts = {
      {{"0x41", "0xd0c"}, "Neoverse-N1"}, {{"0x41", "0xd40"}, "Neoverse-V1"}, {{"0x41", "0xd49"}, "Neoverse-N2"},
      {{"0x41", "0xd4f"}, "Neoverse-V2"}, {{"0x41", "0xd84"}, "Neoverse-V3"}, {{"0x41", "0xd8e"}, "Neoverse-N3"}};
  const auto vendor = implementers.find(implementer);
  const std::string vendor_name = vendor != implementers.end() ? vendor->second : "CPU implementer " + implementer;
  const auto known = parts.find({implementer, part});
  return vendor_name + " " + (known != parts.end() ? known->second : "part " + part);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, implementer, part, hardware;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(std::string_view(line).substr(0, colon));
    const std::string value = trim(std::string_view(line).substr(colon + 1));
    if (value.empty()) continue;
    if (key == "model name") return squeeze_spaces(value);  // x86 and some others: done
    if (key == "CPU implementer" && implementer.empty()) implementer = to_lower(value);
    if (key == "CPU part" && part.empty()) part = to_lower(value);
    if (key == "Hardware" && hardware.empty()) hardware = squeeze_spaces(value);
  }
  if (!implementer.empty() && !part.empty()) return arm_cpu_name(implementer, part);
  if (!hardware.empty()) return hardware;
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) + " CPU" : std::string("unknown CPU");
}

int cpu_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 0;
}

std::string os_pretty_name() {
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
      std::string value = trim(std::string_view(line).substr(std::string_view("PRETTY_NAME=").size()));
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      if (!value.empty()) return value;
    }
  }
  return "";
}

std::string os_description() {
  std::string os = os_pretty_name();
  utsname u{};
  if (uname(&u) == 0) {
    const std::string kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;  // "Linux 6.1.0 x86_64"
    os = os.empty() ? kernel : os + ", " + kernel;
  }
  return os.empty() ? "unknown OS" : os;
}

std::string compiler_description() {
#if defined(__clang__)
  return "Clang " + version_string(__clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return "GCC " + version_string(__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown compiler";
#endif
}

std::string build_type() {
  const std::string configured = TIPBENCH_BUILD_TYPE;
  if (!configured.empty()) return configured;
    // Multi-config generators or an empty CMAKE_BUILD_TYPE: say what the compiler was told.
#if defined(__OPTIMIZE__)
  return "unspecified (optimised)";
#else
  return "unspecified (not optimised)";
#endif
}

// ---------------------------------------------------------------------------------------------
// GPU software stack. Each query is guarded: a version that cannot be read stays "", it never
// stops a run.

// CUDA encodes versions as 1000 * major + 10 * minor: 13000 -> "13.0".
std::string cuda_version_string(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The CUDA runtime LibTorch was compiled against (CUDART_VERSION inside libtorch_cuda); the
// runtime library actually loaded is the fallback.
std::string cuda_runtime_version() {
  try {
    if (at::Context::hasCUDART()) {
      return cuda_version_string(static_cast<int>(at::Context::versionCUDART()));
    }
  } catch (const c10::Error&) {
  }
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) return cuda_version_string(v);
  return "";
}

// Needs no GPU: without a driver CUDA reports 0 (or an error), and we report "".
std::string cuda_driver_api_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();  // do not leave a sticky error behind for the next CUDA call
    return "";
  }
  return cuda_version_string(v);
}

// cuDNN 9 encodes 10000 * major + 100 * minor + patch; cuDNN 8 used 1000 * major.
std::string cudnn_version_string(long v) {
  if (v <= 0) return "";
  if (v >= 90000) return version_string(v / 10000, (v % 10000) / 100, v % 100);
  return version_string(v / 1000, (v % 1000) / 100, v % 100);
}

// The cuDNN library loaded at run time (cudnnGetVersion, no GPU needed); the version LibTorch
// was compiled against is the fallback.
std::string cudnn_version() {
  try {
    if (!at::Context::hasCuDNN()) return "";
    try {
      return cudnn_version_string(at::Context::versionRuntimeCuDNN());
    } catch (const c10::Error&) {
      return cudnn_version_string(at::Context::versionCuDNN());
    }
  } catch (const c10::Error&) {
    return "";
  }
}

// NCCL: the libnccl that libtorch_cuda loaded (ncclGetVersion via dlsym on the already-loaded
// library; RTLD_NOLOAD never loads a different copy), else the version LibTorch was compiled
// against (torch::cuda::nccl::version(), packed as major << 32 | minor << 16 | patch).
std::string nccl_version() {
  if (void* lib = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD)) {
    using GetVersion = int (*)(int*);
    std::string result;
    if (auto get = reinterpret_cast<GetVersion>(dlsym(lib, "ncclGetVersion"))) {
      int v = 0;
      // ncclSuccess == 0. NCCL >= 2.9 encodes 10000 * major + 100 * minor + patch.
      if (get(&v) == 0 && v > 0) {
        result = v >= 20900 ? version_string(v / 10000, (v % 10000) / 100, v % 100)
                            : version_string(v / 1000, (v % 1000) / 100, v % 100);
      }
    }
    dlclose(lib);  // drops only our reference; libtorch_cuda keeps it loaded
    if (!result.empty()) return result;
  }
  try {
    const std::uint64_t v = torch::cuda::nccl::version();
    if (v == 0) return "";
    return version_string(static_cast<long>(v >> 32), static_cast<long>((v >> 16) & 0xFFFF),
                          static_cast<long>(v & 0xFFFF));
  } catch (const c10::Error&) {
    return "";
  }
}

// The NVIDIA driver version from NVML, loaded at run time so that the binary does not need it.
std::string nvidia_driver_version() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return "";
  using Init = int (*)();
  using Shutdown = int (*)();
  using GetDriverVersion = int (*)(char*, unsigned int);
  auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<Shutdown>(dlsym(lib, "nvmlShutdown"));
  auto get = reinterpret_cast<GetDriverVersion>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  std::string result;
  if (init != nullptr && shutdown != nullptr && get != nullptr && init() == 0 /*NVML_SUCCESS*/) {
    char buffer[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
    if (get(buffer, sizeof(buffer)) == 0) result = trim(buffer);
    shutdown();
  }
  dlclose(lib);
  return result;
}

std::vector<GpuInfo> cuda_gpus() {
  std::vector<GpuInfo> gpus;
  const auto count = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < count; ++i) {
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(i));
    GpuInfo g;
    g.index = i;
    g.name = trim(p->name);
    g.compute_capability = std::to_string(p->major) + "." + std::to_string(p->minor);
    g.memory_bytes = static_cast<std::int64_t>(p->totalGlobalMem);
    g.multiprocessors = p->multiProcessorCount;
    gpus.push_back(std::move(g));
  }
  return gpus;
}

}  // namespace

Fingerprint collect_fingerprint(bool include_gpus) {
  Fingerprint fp;
  if (include_gpus) {
    if (torch::cuda::is_available()) fp.gpus = cuda_gpus();
    fp.driver_version = nvidia_driver_version();
    fp.cuda_driver_api_version = cuda_driver_api_version();
  }
  fp.cuda_runtime_version = cuda_runtime_version();
  fp.cudnn_version = cudnn_version();
  fp.nccl_version = nccl_version();
  fp.libtorch_version = TORCH_VERSION;
  fp.cpu_model = cpu_model();
  fp.cpu_cores = cpu_cores();
  fp.os = os_description();
  fp.compiler = compiler_description();
  fp.build_type = build_type();
  return fp;
}

}  // namespace tipbench
