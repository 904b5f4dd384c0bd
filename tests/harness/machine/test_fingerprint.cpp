// Contracts of tipbench::collect_fingerprint, fingerprint_slug, fingerprint_differences, the
// fingerprint's JSON form and environment_warnings. All run on CPU; *_CUDA tests need a device.
#include "tipbench/machine/environment.h"
#include "tipbench/environment/fingerprint.h"
#include "tipbench/machine/collect_fingerprint.h"
#include "tipbench/machine/gpu_conditions.h"
#include "tipbench/machine/run_context.h"

#include "cuda_required.h"

#include <gtest/gtest.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

using tipbench::Fingerprint;
using tipbench::GpuInfo;

bool filesystem_safe(const std::string& s) {
  return !s.empty() && s.front() != '.' && s.front() != '-' && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

Fingerprint sample_gpu_fingerprint() {
  Fingerprint fp;
  fp.gpus = {GpuInfo{0, "NVIDIA H100 80GB HBM3", "9.0", 85'045'477'376, 132},
             GpuInfo{1, "NVIDIA H100 80GB HBM3", "9.0", 85'045'477'376, 132}};
  fp.driver_version = "580.95.05";
  fp.cuda_runtime_version = "13.0";
  fp.cuda_driver_api_version = "13.0";
  fp.cudnn_version = "9.19.0";
  fp.nccl_version = "2.28.9";
  fp.libtorch_version = "2.11.0";
  fp.cpu_model = "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz";
  fp.cpu_cores = 208;
  fp.os = "Ubuntu 22.04.5 LTS, Linux 6.8.0 x86_64";
  fp.compiler = "GCC 12.2.0";
  fp.build_type = "Release";
  return fp;
}

TEST(Fingerprint, CollectsHostAndSoftwareFieldsOnCpu) {
  const Fingerprint fp = tipbench::collect_fingerprint(/*include_gpus=*/false);
  EXPECT_EQ(fp.libtorch_version, std::string(TORCH_VERSION));
  EXPECT_FALSE(fp.libtorch_version.empty());
  EXPECT_GT(fp.cpu_cores, 0);
  EXPECT_FALSE(fp.cpu_model.empty());
  EXPECT_FALSE(fp.os.empty());
  EXPECT_FALSE(fp.compiler.empty());
  EXPECT_FALSE(fp.build_type.empty());
  // A CPU fingerprint never lists GPUs nor the machine's driver, even on a GPU machine.
  EXPECT_TRUE(fp.gpus.empty());
  EXPECT_TRUE(fp.driver_version.empty());
  EXPECT_TRUE(fp.cuda_driver_api_version.empty());
  std::cout << "fingerprint: " << nlohmann::json(fp).dump() << "\n"
            << "slug: " << tipbench::fingerprint_slug(fp) << "\n";
}

TEST(Fingerprint, CollectingGpusDoesNotThrowWithoutADevice) {
  // On a machine without a GPU (or driver) the GPU fields stay empty instead of failing.
  const Fingerprint fp = tipbench::collect_fingerprint(/*include_gpus=*/true);
  EXPECT_EQ(fp.libtorch_version, std::string(TORCH_VERSION));
  if (!torch::cuda::is_available()) {
    EXPECT_TRUE(fp.gpus.empty());
  }
}

TEST(Fingerprint, SlugIsFilesystemSafeAndStable) {
  const Fingerprint here = tipbench::collect_fingerprint(false);
  const std::string slug = tipbench::fingerprint_slug(here);
  EXPECT_TRUE(filesystem_safe(slug)) << slug;
  EXPECT_EQ(slug, tipbench::fingerprint_slug(tipbench::collect_fingerprint(false)));
  EXPECT_EQ(slug.rfind("cpu-", 0), 0U) << slug;
  EXPECT_NE(slug.find("-" + std::to_string(here.cpu_cores) + "c_torch"), std::string::npos) << slug;
}

TEST(Fingerprint, SlugKnownAnswers) {
  Fingerprint fp = sample_gpu_fingerprint();
  EXPECT_EQ(tipbench::fingerprint_slug(fp), "nvidia-h100-80gb-hbm3-x2_cuda13.0_torch2.11.0");
  fp.gpus.pop_back();
  EXPECT_EQ(tipbench::fingerprint_slug(fp), "nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0");
  // The slug keys on the device and the stack, not on the driver or the OS.
  fp.driver_version = "999.0";
  fp.os = "something else";
  EXPECT_EQ(tipbench::fingerprint_slug(fp), "nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0");

  fp.gpus.clear();
  fp.cpu_cores = 2;
  EXPECT_EQ(tipbench::fingerprint_slug(fp), "cpu-intel-xeon-platinum-8481c-2c_torch2.11.0");
  fp.cpu_model = "AMD EPYC 9654 96-Core Processor";
  fp.cpu_cores = 384;
  fp.libtorch_version = "2.11.0+cu130";
  EXPECT_EQ(tipbench::fingerprint_slug(fp), "cpu-amd-epyc-9654-384c_torch2.11.0-cu130");
  fp.cpu_model = "../../etc/ Weird   Name!";
  EXPECT_TRUE(filesystem_safe(tipbench::fingerprint_slug(fp))) << tipbench::fingerprint_slug(fp);
  fp.cpu_model.clear();
  EXPECT_EQ(tipbench::fingerprint_slug(fp), "cpu-unknown-384c_torch2.11.0-cu130");
}

TEST(Fingerprint, JsonRoundTripIsExact) {
  for (const Fingerprint& fp : {sample_gpu_fingerprint(), tipbench::collect_fingerprint(false), Fingerprint{}}) {
    const nlohmann::json j = fp;
    const auto back = j.get<Fingerprint>();
    EXPECT_TRUE(tipbench::fingerprint_differences(fp, back).empty()) << j.dump();
    EXPECT_EQ(nlohmann::json(back), j);
    // Through text as well, as results are stored.
    const auto reparsed = nlohmann::json::parse(j.dump()).get<Fingerprint>();
    EXPECT_TRUE(tipbench::fingerprint_differences(fp, reparsed).empty());
  }
}

TEST(Fingerprint, JsonUsesDocumentedKeys) {
  const nlohmann::json j = sample_gpu_fingerprint();
  EXPECT_EQ(j.at("gpus").at(0).at("memory_bytes").get<std::int64_t>(), 85'045'477'376);
  EXPECT_EQ(j.at("gpus").at(0).at("multiprocessors").get<int>(), 132);
  EXPECT_EQ(j.at("gpus").at(1).at("index").get<int>(), 1);
  EXPECT_EQ(j.at("gpus").at(0).at("compute_capability"), "9.0");
  EXPECT_EQ(j.at("cuda_runtime_version"), "13.0");
  EXPECT_EQ(j.at("cpu_cores").get<int>(), 208);
  EXPECT_EQ(j.size(), 12U) << j.dump();  // 11 scalar fields + gpus
}

TEST(Fingerprint, FromJsonRejectsAMissingField) {
  nlohmann::json j = sample_gpu_fingerprint();
  j.erase("libtorch_version");
  EXPECT_THROW(j.get<Fingerprint>(), nlohmann::json::exception);
}

TEST(Fingerprint, DifferencesNameTheChangedFields) {
  const Fingerprint a = sample_gpu_fingerprint();
  EXPECT_TRUE(tipbench::fingerprint_differences(a, a).empty());

  Fingerprint b = a;
  b.gpus[0].name = "NVIDIA H200";
  b.gpus[1].memory_bytes += 1;
  b.libtorch_version = "2.12.0";
  b.cpu_cores = 16;
  const std::vector<std::string> expected = {"gpus[0].name", "gpus[1].memory_bytes", "libtorch_version", "cpu_cores"};
  EXPECT_EQ(tipbench::fingerprint_differences(a, b), expected);

  Fingerprint c = a;
  c.gpus.pop_back();
  c.driver_version = "575.0";
  const std::vector<std::string> expected_c = {"gpus", "driver_version"};
  EXPECT_EQ(tipbench::fingerprint_differences(a, c), expected_c);
}

// GPU conditions of measurement: nothing for a CPU run; on a GPU, NVML's figures for the run's GPU.
TEST(GpuConditions, NothingForACpuRun) {
  EXPECT_TRUE(tipbench::GpuConditionsProbe("cpu").finish().empty());
  // Without a GPU or NVML (this machine, a CI runner) a CUDA device string gives nothing either.
  if (!torch::cuda::is_available()) EXPECT_TRUE(tipbench::GpuConditionsProbe("cuda:0").finish().empty());
}

TEST(GpuConditions, SamplesTheRunsGpu_CUDA) {
  TIPBENCH_REQUIRE_CUDA();
  const tipbench::GpuConditionsProbe probe("cuda:0");
  const auto gpus = probe.finish();
  ASSERT_EQ(gpus.size(), 1u) << "NVML (libnvidia-ml.so.1) did not see cuda:0";
  EXPECT_EQ(gpus[0].gpu.rfind("GPU 0", 0), 0u) << gpus[0].gpu;
  ASSERT_TRUE(gpus[0].sm_clock_mhz.has_value());
  EXPECT_GT(*gpus[0].sm_clock_mhz, 100);
  ASSERT_TRUE(gpus[0].temperature_c.has_value());
  EXPECT_GT(*gpus[0].temperature_c, 5);
  EXPECT_LT(*gpus[0].temperature_c, 110);
  ASSERT_TRUE(gpus[0].thermal_share.has_value());
  EXPECT_GE(*gpus[0].thermal_share, 0.0);
  EXPECT_LE(*gpus[0].thermal_share, 1.0);
  ASSERT_TRUE(gpus[0].power_capped_share.has_value());
  ASSERT_TRUE(gpus[0].other_processes.has_value());
  std::cout << "GPU conditions: " << gpus[0].gpu << ", SM " << *gpus[0].sm_clock_mhz << " MHz, "
            << *gpus[0].temperature_c << " C, thermal " << *gpus[0].thermal_share << ", power-capped "
            << *gpus[0].power_capped_share << ", others " << *gpus[0].other_processes << "\n";
}

TEST(Environment, WarningsAreSentences) {
  std::vector<std::string> warnings;
  ASSERT_NO_THROW(warnings = tipbench::environment_warnings(/*check_gpus=*/false));
  for (const auto& w : warnings) {
    EXPECT_FALSE(w.empty());
    EXPECT_EQ(w.back(), '.') << w;
    std::cout << "warning: " << w << "\n";
  }
}

TEST(Environment, GpuChecksNeverThrow) {
  // Without NVML (as on CI machines) this is exactly one "could not be checked" line.
  std::vector<std::string> warnings;
  ASSERT_NO_THROW(warnings = tipbench::environment_warnings(/*check_gpus=*/true));
  for (const auto& w : warnings) {
    EXPECT_FALSE(w.empty());
    std::cout << "warning: " << w << "\n";
  }
}

// The device bundle runs tipbench away from its source tree; run.sh names the build's commit.
TEST(RunContext, GitStateFromTheEnvironmentWins) {
  const char* sha_before = std::getenv("TIPBENCH_GIT_SHA");
  const char* dirty_before = std::getenv("TIPBENCH_GIT_DIRTY");
  const std::string saved_sha = sha_before ? sha_before : "", saved_dirty = dirty_before ? dirty_before : "";
  ::setenv("TIPBENCH_GIT_SHA", "0123456789abcdef0123456789abcdef01234567", 1);
  ::setenv("TIPBENCH_GIT_DIRTY", "1", 1);
  auto git = tipbench::source_git_state();
  EXPECT_EQ(git.sha, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_TRUE(git.dirty);
  ::setenv("TIPBENCH_GIT_DIRTY", "0", 1);
  EXPECT_FALSE(tipbench::source_git_state().dirty);
  ::unsetenv("TIPBENCH_GIT_SHA");
  ::unsetenv("TIPBENCH_GIT_DIRTY");
  git = tipbench::source_git_state();  // the source tree's own state (or "" without one)
  EXPECT_NE(git.sha, "0123456789abcdef0123456789abcdef01234567");
  if (sha_before) ::setenv("TIPBENCH_GIT_SHA", saved_sha.c_str(), 1);
  if (dirty_before) ::setenv("TIPBENCH_GIT_DIRTY", saved_dirty.c_str(), 1);
}

TEST(FingerprintGpus_CUDA, ListsEveryVisibleGpu) {
  TIPBENCH_REQUIRE_CUDA();
  const Fingerprint fp = tipbench::collect_fingerprint(/*include_gpus=*/true);
  ASSERT_FALSE(fp.gpus.empty());
  EXPECT_EQ(fp.gpus.size(), static_cast<std::size_t>(torch::cuda::device_count()));
  for (const auto& g : fp.gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_FALSE(g.compute_capability.empty());
    EXPECT_GT(g.memory_bytes, 0);
    EXPECT_GT(g.multiprocessors, 0);
  }
  EXPECT_FALSE(fp.cuda_runtime_version.empty());
  EXPECT_FALSE(fp.cuda_driver_api_version.empty());
  const std::string slug = tipbench::fingerprint_slug(fp);
  EXPECT_TRUE(filesystem_safe(slug)) << slug;
  EXPECT_NE(slug.find("_cuda"), std::string::npos) << slug;
  std::cout << "fingerprint: " << nlohmann::json(fp).dump(2) << "\nslug: " << slug << "\n";
}

}  // namespace
