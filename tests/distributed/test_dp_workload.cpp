// The `dp` arm (nn.DataParallel's scheme: replicas made once, parameters and buffers broadcast
// each step, gradients reduced onto cuda:0) on a machine with at least two GPUs: it trains, and
// it reports the peak memory of every device beside cuda:0. Named _MULTIGPU, not _CUDA: the
// bundle's check runs *_CUDA tests and fails one that skips on a GPU machine, and most have one
// GPU; `run.sh tests` runs this one everywhere (skipped below two GPUs, with the reason).
#include "distributed/dp_workload.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

namespace {

TEST(DataParallelWorkload_MULTIGPU, TrainsOnEveryGpuAndReportsTheirPeakMemory) {
  const auto gpus = torch::cuda::device_count();
  if (gpus < 2) GTEST_SKIP() << "needs at least 2 GPUs; " << gpus << " visible";
  tipbench::SuiteContext context;
  context.device = c10::Device(c10::kCUDA, 0);
  auto workload = tipbench::distributed::make_dp_workload(context, {.model = "small_cnn", .batch_size = 16});
  EXPECT_EQ(workload->samples_per_step(), 16 * static_cast<std::int64_t>(gpus));
  for (int i = 0; i < 3; ++i) workload->step();
  torch::cuda::synchronize();
  const auto metrics = workload->metrics();
  for (c10::DeviceIndex i = 1; i < gpus; ++i) {
    const auto key = "cuda" + std::to_string(i) + "_peak_memory_mb";
    ASSERT_TRUE(metrics.contains(key)) << key;
    EXPECT_GT(metrics.at(key), 0.0) << key;
  }
}

TEST(DataParallelWorkload, RefusesFewerThanTwoGpusWithTheReason) {
  if (torch::cuda::device_count() >= 2) GTEST_SKIP() << "this machine has 2 or more GPUs";
  tipbench::SuiteContext context;
  context.device = c10::Device(c10::kCUDA, 0);
  try {
    tipbench::distributed::make_dp_workload(context, {.model = "small_cnn", .batch_size = 16});
    FAIL() << "built a DataParallel workload without 2 GPUs";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2 GPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
