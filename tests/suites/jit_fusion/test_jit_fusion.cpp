// Fusion is read from the optimized graph, never assumed. On this CPU build TorchScript does not
// fuse (CPU fusion is off, and NNC has no LLVM backend here), and the report says so; forcing
// CPU fusion through NNC's interpreter backend gives a graph that does hold a fusion group, so
// the detection is checked both ways without a GPU. FusesOnGpu_CUDA checks the GPU path. The
// three forms of each pointwise block compute the same thing.
#include "jit_fusion/pointwise.h"
#include "jit_fusion/torchscript.h"

#include "cuda_required.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#if __has_include(<torch/csrc/jit/codegen/fuser/interface.h>) && __has_include(<torch/csrc/jit/tensorexpr/kernel.h>)
#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#define TIPBENCH_TEST_CAN_FORCE_CPU_FUSION 1
#endif

namespace {

namespace s = tipbench::suites;

#define REQUIRE_TORCHSCRIPT()                                                 \
  do {                                                                        \
    if (auto why = s::torchscript_unavailable_reason()) GTEST_SKIP() << *why; \
  } while (0)

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FusionDetection, ReportsWhatTheCpuGraphHolds) {
  REQUIRE_TORCHSCRIPT();
  s::ScriptFunction gelu(s::pointwise_script(s::PointwiseBlock::gelu), "f");
  const auto report = gelu.warm_up({torch::randn({64, 64})});
  ASSERT_FALSE(report.graph.empty());
  EXPECT_NE(report.graph.find("aten::erf"), std::string::npos) << report.graph;
  // The report comes from walking the graph; it agrees with the printed graph.
  const bool printed_group = report.graph.find("TensorExprGroup") != std::string::npos ||
                             report.graph.find("FusionGroup") != std::string::npos;
  EXPECT_EQ(report.fused(), printed_group) << report.graph;
  EXPECT_EQ(report.status(), report.fused() ? "fused" : "not_fused");
  if (!report.fused()) {
    EXPECT_EQ(report.fused_ops, 0);
    EXPECT_EQ(occurrences(report.graph, "TensorExprGroup"), 0) << report.graph;
  }
}

TEST(FusionDetection, CpuDiagnosisSaysWhyByTrying) {
  REQUIRE_TORCHSCRIPT();
  const auto diagnosis = s::cpu_fusion_diagnosis();
  EXPECT_NE(diagnosis.find("CPU fusion"), std::string::npos) << diagnosis;
  // After the probe, CPU fusion is off again: the probe must not change what the arms measure.
  s::ScriptFunction gelu(s::pointwise_script(s::PointwiseBlock::gelu), "f");
  const auto plain = gelu.warm_up({torch::randn({32, 32})});
#ifdef TIPBENCH_TEST_CAN_FORCE_CPU_FUSION
  if (!torch::jit::canFuseOnCPU()) {
    EXPECT_FALSE(plain.fused()) << plain.graph;
  }
#endif
}

#ifdef TIPBENCH_TEST_CAN_FORCE_CPU_FUSION
// NNC's interpreter backend (no LLVM needed) makes real fusion groups on the CPU: the positive
// case of the detection, and the fused result still equals eager.
TEST(FusionDetection, FindsAFusionGroupWhenNncFuses) {
  REQUIRE_TORCHSCRIPT();
  // Restores both switches however the block below ends.
  struct ForceCpuFusion {
    bool& must_use_llvm = torch::jit::tensorexpr::getTEMustUseLLVMOnCPU();
    bool saved = must_use_llvm;
    ForceCpuFusion() {
      torch::jit::overrideCanFuseOnCPU(true);
      must_use_llvm = false;
    }
    ~ForceCpuFusion() {
      must_use_llvm = saved;
      torch::jit::overrideCanFuseOnCPU(false);
    }
  };
  s::FusionReport report;
  torch::Tensor fused, expected;
  {
    ForceCpuFusion force;
    const auto in = s::make_pointwise_inputs(s::PointwiseBlock::bias_gelu, 16, 32, torch::kCPU, false);
    s::ScriptFunction f(s::pointwise_script(s::PointwiseBlock::bias_gelu), "f");
    report = f.warm_up(s::pointwise_script_args(s::PointwiseBlock::bias_gelu, in));
    fused = f(s::pointwise_script_args(s::PointwiseBlock::bias_gelu, in));
    expected = s::pointwise_eager(s::PointwiseBlock::bias_gelu, in);
  }
  EXPECT_TRUE(report.fused()) << report.graph;
  EXPECT_EQ(report.status(), "fused");
  EXPECT_GE(report.fusion_groups, 1);
  // add and div, then mul, add, mul (the interpreter backend leaves erf out of its groups)
  EXPECT_GE(report.fused_ops, 3) << report.graph;
  EXPECT_GE(occurrences(report.graph, "prim::TensorExprGroup"), 1) << report.graph;
  EXPECT_TRUE(torch::allclose(fused, expected, 1e-5, 1e-6));
}
#endif

TEST(PointwiseBlocks, ThreeFormsAgree) {
  for (auto block : s::all_pointwise_blocks()) {
    SCOPED_TRACE(s::to_string(block));
    torch::manual_seed(0);
    auto in = s::make_pointwise_inputs(block, 8, 64, torch::kCPU, false);
    in.training = false;  // dropout off: deterministic
    const auto eager = s::pointwise_eager(block, in);
    if (!s::torchscript_unavailable_reason()) {
      s::ScriptFunction f(s::pointwise_script(block), "f");
      EXPECT_TRUE(torch::allclose(f(s::pointwise_script_args(block, in)), eager, 1e-5, 1e-6));
    }
    if (!s::pointwise_native_missing(block)) {
      // at::gelu uses sqrt(2) exactly; the hand-written form divides by 1.41421.
      EXPECT_TRUE(torch::allclose(s::pointwise_native(block, in), eager, 1e-4, 1e-5));
    } else {
      EXPECT_THROW(s::pointwise_native(block, in), std::logic_error);
    }
  }
  EXPECT_EQ(s::pointwise_block_from("layer_norm"), s::PointwiseBlock::layer_norm);
  EXPECT_THROW(s::pointwise_block_from("softmax"), std::invalid_argument);
}

// The training path: inputs that require grad give a differentiable graph with backward.
TEST(PointwiseBlocks, ScriptGradientsMatchEager) {
  REQUIRE_TORCHSCRIPT();
  const auto block = s::PointwiseBlock::layer_norm;
  torch::manual_seed(0);
  const auto in = s::make_pointwise_inputs(block, 8, 64, torch::kCPU, true);
  s::ScriptFunction f(s::pointwise_script(block), "f");
  f.warm_up(s::pointwise_script_args(block, in));
  const auto g_script = torch::autograd::grad({f(s::pointwise_script_args(block, in)).sum()}, in.differentiable());
  const auto g_eager = torch::autograd::grad({s::pointwise_eager(block, in).sum()}, in.differentiable());
  ASSERT_EQ(g_script.size(), g_eager.size());
  for (std::size_t i = 0; i < g_eager.size(); ++i) EXPECT_TRUE(torch::allclose(g_script[i], g_eager[i], 1e-4, 1e-5));
}

TEST(FusionDetection, FusesOnGpu_CUDA) {
  TIPBENCH_REQUIRE_CUDA();
  REQUIRE_TORCHSCRIPT();
  for (auto block : {s::PointwiseBlock::gelu, s::PointwiseBlock::bias_gelu}) {
    SCOPED_TRACE(s::to_string(block));
    const auto in = s::make_pointwise_inputs(block, 1024, 768, torch::kCUDA, /*requires_grad=*/false);
    s::ScriptFunction f(s::pointwise_script(block), "f");
    const auto report = f.warm_up(s::pointwise_script_args(block, in));
    EXPECT_TRUE(report.fused()) << report.graph;
    EXPECT_TRUE(torch::allclose(f(s::pointwise_script_args(block, in)), s::pointwise_eager(block, in), 1e-5, 1e-6));
  }
  // Training: inputs that require grad put the expression inside a differentiable graph, and
  // torch 2.11's profiling executor runs no fuser there (profiling_graph_executor_impl.cpp,
  // runProfilingOptimizations). Seen on an H100 (2026-11-26): DifferentiableGraph_0 held the
  // ops unfused. Should a release fuse there again, this fails and the suite's notes and the
  // diagnosis must change with it.
  const auto in = s::make_pointwise_inputs(s::PointwiseBlock::bias_gelu, 1024, 768, torch::kCUDA, true);
  s::ScriptFunction f(s::pointwise_script(s::PointwiseBlock::bias_gelu), "f");
  const auto report = f.warm_up(s::pointwise_script_args(s::PointwiseBlock::bias_gelu, in));
  EXPECT_FALSE(report.fused()) << report.graph;
  EXPECT_NE(report.graph.find("DifferentiableGraph"), std::string::npos) << report.graph;
  // The suite passes the run's device, which has an index ("cuda:0"); a bare kCUDA prints "cuda"
  // (this expectation failed so on an H100, 2026-11-26, after a refactor no GPU had checked).
  const torch::Device run_device(torch::kCUDA, 0);
  const std::string diagnosis = s::gpu_fusion_diagnosis(run_device);
  EXPECT_NE(diagnosis.find("without grad on " + run_device.str() + ", NNC fused the probe"), std::string::npos)
      << diagnosis;
}

}  // namespace
