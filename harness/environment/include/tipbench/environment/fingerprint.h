// What identifies the hardware and software a result came from. Results whose fingerprints
// differ are never compared silently. Collected on this machine by tipbench::machine
// (tipbench/machine/collect_fingerprint.h). Example:
//   auto fp = tipbench::collect_fingerprint(/*include_gpus=*/true);   // fp.gpus, fp.libtorch_version
//   nlohmann::json j = fp;  std::string key = fingerprint_slug(fp);
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tipbench {

struct GpuInfo {
  int index = 0;
  std::string name;                // "NVIDIA H100 80GB HBM3"
  std::string compute_capability;  // "9.0"
  std::int64_t memory_bytes = 0;
  int multiprocessors = 0;
};

struct Fingerprint {
  std::vector<GpuInfo> gpus;            // empty on a machine without CUDA devices
  std::string driver_version;           // NVIDIA driver (NVML) or "" when unknown
  std::string cuda_runtime_version;     // the CUDA runtime LibTorch was built with, "13.0"
  std::string cuda_driver_api_version;  // the highest CUDA the driver supports, "" without one
  std::string cudnn_version;            // "9.19.0", "" when unavailable
  std::string nccl_version;             // "2.28.9", "" when unavailable
  std::string libtorch_version;         // "2.11.0"
  std::string cpu_model;
  int cpu_cores = 0;       // logical CPUs online
  std::string os;          // "Debian GNU/Linux 12 (bookworm), Linux 6.1.0 x86_64"
  std::string compiler;    // "GCC 12.2.0"
  std::string build_type;  // CMAKE_BUILD_TYPE of this binary
};

// A short, filesystem-safe key for baselines: "nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0" or
// "cpu-intel-xeon-platinum-8481c-2c_torch2.11.0".
std::string fingerprint_slug(const Fingerprint& fp);
// Why a run whose recorded slug is `slug` cannot be the run it says it is: its fingerprint gives
// another slug (a hand-edited file, or a slug from elsewhere); nullopt when the two agree. Files
// are filed and found by slug, so a baseline, a gated run and a resumed run must pass this.
std::optional<std::string> slug_identity_problem(const std::string& slug, const Fingerprint& fp);

// One field that differs between two fingerprints, with both values as text ("none" for "").
struct FingerprintChange {
  std::string field;  // "libtorch_version", "gpus[0].name", "gpus" (their count)
  std::string before, after;
  bool hardware = false;  // the GPUs (count and every field) and the CPU model and cores
};

// The fields that differ, in field order: empty when equal.
std::vector<FingerprintChange> fingerprint_changes(const Fingerprint& a, const Fingerprint& b);
// "libtorch_version 2.11.0 -> 2.15.0"
std::string to_string(const FingerprintChange& change);
// Every change from a to b, comma-separated: "libtorch_version 2.11.0 -> 2.15.0, compiler ..."; "" if equal.
std::string fingerprint_changes_text(const Fingerprint& a, const Fingerprint& b);
// Same GPUs (models, count) and CPU (model, cores): a baseline of other software may gate it.
bool same_hardware(const Fingerprint& a, const Fingerprint& b);

// Names of the fields that differ ("gpus[0].name", "libtorch_version", ...): empty when equal.
std::vector<std::string> fingerprint_differences(const Fingerprint& a, const Fingerprint& b);

void to_json(nlohmann::json& j, const GpuInfo& g);
void from_json(const nlohmann::json& j, GpuInfo& g);
void to_json(nlohmann::json& j, const Fingerprint& fp);
void from_json(const nlohmann::json& j, Fingerprint& fp);

}  // namespace tipbench
