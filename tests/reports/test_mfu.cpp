// MFU (reports/mfu.h): the model FLOPs an arm records (or a pre-1.10 result's reference model),
// the dense peak of its GPU for the precision its matrix work ran in, and what is said when either
// is unknown; the run summary's line on a GPU.
#include "tipbench/reports/console.h"
#include "tipbench/reports/mfu.h"

#include "tipbench/environment/gpu_peaks.h"
#include "tipbench/models/model_flops.h"
#include "text_match.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using tipbench::testing::contains;
namespace r = tipbench::reports;

tipbench::Result gpu_run(const std::string& gpu_name) {
  tipbench::Result run;
  run.context.device = "cuda:0";
  tipbench::GpuInfo gpu;
  gpu.name = gpu_name;
  run.context.fingerprint.gpus = {gpu};
  return run;
}

tipbench::ArmResult arm(const std::string& model, const std::string& precision, double samples_per_s) {
  tipbench::ArmResult a;
  a.arm = precision;
  a.info = {{"model", model}, {"image_size", 224}, {"precision", precision}, {"input_shapes", "fixed"}};
  if (const auto* f = tipbench::reference_flops(model, 224)) a.info["training_flops_per_sample"] = f->training_flops;
  a.throughput_samples_per_s.median = samples_per_s;
  return a;
}

TEST(Mfu, IsTheModelsFlopsTimesSamplesOverThePeakOfThePrecisionItsMatrixWorkRanIn) {
  const auto run = gpu_run("NVIDIA H100 80GB HBM3");
  const double resnet = tipbench::reference_flops("resnet50", 224)->training_flops;
  const auto bf16 = r::arm_mfu(run, arm("resnet50", "bf16", 3660.3));
  ASSERT_TRUE(bf16 && bf16->mfu);
  EXPECT_DOUBLE_EQ(bf16->model_tflops, resnet * 3660.3 / 1e12);
  EXPECT_EQ(bf16->peak_name, "bf16");
  EXPECT_DOUBLE_EQ(*bf16->mfu, bf16->model_tflops / 989.4);
  EXPECT_EQ(r::mfu_words(*bf16), "88.9 TFLOP/s, 9.0% of bf16 (H100 SXM5 dense 989.4)");
  // fp32 with PyTorch's defaults: a CNN's convolutions run in TF32, a ViT's matrix products do not.
  EXPECT_EQ(r::arm_mfu(run, arm("resnet50", "fp32", 1781.7))->peak_name, "tf32");
  EXPECT_EQ(r::arm_mfu(run, arm("vit_b_16", "fp32", 363.6))->peak_name, "fp32");
  auto ieee = arm("resnet50", "fp32", 824.9);
  ieee.info["cudnn_tf32"] = false;
  EXPECT_EQ(r::arm_mfu(run, ieee)->peak_name, "fp32");
  auto tf32 = arm("vit_b_16", "fp32", 963.9);
  tf32.info["matmul_precision"] = "high";
  EXPECT_EQ(r::arm_mfu(run, tf32)->peak_name, "tf32");
  // ViT-B/16's count holds the attention's matrix products: 105.15 GFLOP, not 100.86.
  EXPECT_NEAR(r::arm_mfu(run, arm("vit_b_16", "bf16", 1776.1))->model_tflops, 186.8, 0.05);
}

TEST(Mfu, SaysWhatItCannotKnow) {
  // An unknown GPU: the TFLOP/s, and where the peak would go.
  const auto unknown = r::arm_mfu(gpu_run("NVIDIA Z9000"), arm("resnet50", "bf16", 1000));
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->mfu);
  EXPECT_TRUE(contains(r::mfu_words(*unknown), "no dense peak known for NVIDIA Z9000")) << r::mfu_words(*unknown);
  // A CPU run: no peak either.
  tipbench::Result cpu;
  cpu.context.device = "cpu";
  EXPECT_FALSE(r::arm_mfu(cpu, arm("resnet50", "fp32", 10))->mfu);
  // No model FLOPs: a user's model, an arm that did not run.
  EXPECT_FALSE(r::arm_mfu(gpu_run("NVIDIA H200"), arm("my_net", "bf16", 1000)));
  auto skipped = arm("resnet50", "bf16", 0);
  skipped.status = tipbench::ArmStatus::skipped;
  EXPECT_FALSE(r::arm_mfu(gpu_run("NVIDIA H200"), skipped));
}

// Results before schema 1.10 did not record the FLOPs: a training arm of a reference model gets
// the table's; one whose info shows another workload does not.
TEST(Mfu, AnOlderResultsTrainingArmsGetTheReferenceCount) {
  auto run = gpu_run("NVIDIA H200");
  run.schema_version = "1.9";
  auto old = arm("resnet50", "bf16", 2000);
  old.info.erase("training_flops_per_sample");
  ASSERT_TRUE(r::arm_mfu(run, old));
  auto variant = old;
  variant.info["hidden_dim"] = 756;
  EXPECT_FALSE(r::arm_mfu(run, variant));
  auto shapes = old;
  shapes.info["input_shapes"] = "varying";
  EXPECT_FALSE(r::arm_mfu(run, shapes));
  run.schema_version = "1.10";
  EXPECT_FALSE(r::arm_mfu(run, old));  // a 1.10 arm without the field is no reference step
}

TEST(Mfu, TheGpuRunsSummaryNamesEachArmsMfu) {
  auto run = gpu_run("NVIDIA H100 80GB HBM3");
  tipbench::SuiteResult s;
  s.name = "amp";
  tipbench::CaseResult c;
  c.name = "amp/model:resnet50/batch:128/layout:nchw";
  c.arms = {arm("resnet50", "fp32", 1781.7), arm("resnet50", "bf16", 2120.5)};
  for (auto& a : c.arms) a.status = tipbench::ArmStatus::ok;
  s.cases = {c};
  run.suites = {s};
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buffer, &size);
  r::print_run_summary(run, out);
  std::fclose(out);
  const std::string text(buffer, size);
  std::free(buffer);
  EXPECT_TRUE(contains(text,
                       "model FLOPs 24.30 GFLOP per sample (training step); fp32 43.3 TFLOP/s, 8.8% of tf32 "
                       "(H100 SXM5 dense 494.7); bf16 51.5 TFLOP/s, 5.2% of bf16"))
      << text;
}

// Every GPU kind's peaks are ordered as the hardware is (fp32 < TF32 < bf16) and named once.
TEST(GpuPeaks, EachKindIsNamedOnceWithItsSource) {
  for (const auto& p : tipbench::dense_peak_table()) {
    EXPECT_LT(p.fp32_tflops, p.tf32_tflops) << p.kind;
    EXPECT_NEAR(p.bf16_tflops, 2 * p.tf32_tflops, 1.0) << p.kind;  // Hopper and Ampere: dense bf16 = 2x TF32
    EXPECT_FALSE(p.source.empty());
    for (const auto& name : p.gpu_names) EXPECT_EQ(tipbench::dense_peaks(name), &p) << name;
  }
  EXPECT_EQ(tipbench::dense_peaks("NVIDIA H100"), nullptr);  // exact names only: no guess between SXM and PCIe
}

}  // namespace
