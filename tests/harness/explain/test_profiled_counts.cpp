// Counted work from profiled events (profiled_counts.h), on event lists built by hand to PyTorch
// 2.11's profiler semantics (cuda_event_list.h): a CPU records no kernel, so the CUDA counts are
// checked here first and on the lists a GPU records once the first call brings them back.
#include "tipbench/explain/profiled_counts.h"

#include "cuda_event_list.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::NamedCount;
using tipbench::ProfiledKind;
using tipbench::StepCounts;
using tipbench::testing::CudaSteps;
using tipbench::testing::kEngine;

const NamedCount* named(const std::vector<NamedCount>& list, const std::string& name) {
  for (const auto& n : list) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// Two attributed steps after a lead-in, each: forward (linear = addmm, which calls an empty
// inside it), backward on the engine thread (mm), a blocking .item() (a DtoH copy and a stream
// sync), and the optimizer's foreach launched through the driver API with a memset.
CudaSteps two_steps() {
  CudaSteps c;
  c.s.steps = 2;
  const auto lead = c.op("tipbench::lead_in", 0, 9, -1);
  const auto lead_op = c.op("aten::addmm", 1, 8, lead);
  c.kernel("void gemm_kernel<float>(Params)", 2, 5, 30, lead_op);
  for (int k = 0; k < 2; ++k) {
    const std::int64_t t = 10 + 100 * k;
    const auto step = c.op("tipbench::step", t, t + 100, -1);
    const auto forward = c.op("tipbench::forward", t, t + 40, step);
    const auto linear = c.op("aten::linear", t + 1, t + 30, forward);
    const auto addmm = c.op("aten::addmm", t + 2, t + 25, linear);
    c.op("aten::empty", t + 3, t + 4, addmm);
    c.alloc(t + 3, 1000 + k, 4096, 8192, addmm);
    c.kernel("void gemm_kernel<float>(Params)", t + 20, t + 30, t + 40, addmm);
    const auto backward = c.op("tipbench::backward", t + 40, t + 70, step);
    const auto node = c.op("autograd::engine::evaluate_function: AddmmBackward0", t + 41, t + 60, backward, kEngine);
    const auto mm = c.op("aten::mm", t + 42, t + 55, node, kEngine);
    c.kernel("void gemm_kernel<float>(Params)", t + 45, t + 48, t + 60, mm, kEngine);
    const auto item = c.op("aten::item", t + 60, t + 68, step);
    const auto scalar = c.op("aten::_local_scalar_dense", t + 61, t + 67, item);
    c.copy("Memcpy DtoH (Device -> Pageable)", 4, t + 62, scalar);
    c.call("cudaStreamSynchronize", t + 63, t + 66, scalar);
    const auto optimizer = c.op("tipbench::optimizer", t + 70, t + 100, step);
    const auto foreach = c.op("aten::_foreach_add_", t + 71, t + 99, optimizer);
    c.kernel("void multi_tensor_apply_kernel<Functor>(Meta, Functor)", t + 80, t + 85, t + 90, foreach,
             tipbench::testing::kMain, "cuLaunchKernelEx");
    c.kernel("Memset (Device)", t + 86, t + 88, t + 89, foreach, tipbench::testing::kMain, "cudaMemsetAsync",
             ProfiledKind::memset);
  }
  return c;
}

TEST(ProfiledCounts, OpsCountPerStepWithTheTopLevelOnesApartAndTheLeadInLeftOut) {
  const StepCounts c = tipbench::count_profiled_steps(two_steps().s);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.steps, 2);
  EXPECT_TRUE(c.steady);
  // linear, addmm, empty, mm, item, _local_scalar_dense, _foreach_add_: 7 per step; the lead-in's
  // addmm is not counted; the autograd node and the tipbench scopes are no ops.
  EXPECT_DOUBLE_EQ(c.ops_per_step, 7);
  // linear, mm (the engine called it: no op above it), item, _foreach_add_.
  EXPECT_DOUBLE_EQ(c.top_level_ops_per_step, 4);
  ASSERT_NE(named(c.ops, "aten::addmm"), nullptr);
  EXPECT_DOUBLE_EQ(named(c.ops, "aten::addmm")->per_step, 1);
  EXPECT_EQ(named(c.ops, "AddmmBackward0"), nullptr);
  EXPECT_DOUBLE_EQ(c.allocations_per_step, 1);
  EXPECT_DOUBLE_EQ(c.allocated_bytes_per_step, 4096);
}

TEST(ProfiledCounts, KernelsCopiesMemsetsAndSyncsCountOnTheGpu) {
  const StepCounts c = tipbench::count_profiled_steps(two_steps().s);
  ASSERT_TRUE(c.kernels_per_step.has_value());
  EXPECT_DOUBLE_EQ(*c.kernels_per_step, 3);  // two gemms (forward, backward) and the foreach
  ASSERT_NE(named(c.kernels, "gemm_kernel"), nullptr);
  EXPECT_DOUBLE_EQ(named(c.kernels, "gemm_kernel")->per_step, 2);
  const auto* dtoh = named(c.copies, "Memcpy DtoH");
  ASSERT_NE(dtoh, nullptr);
  EXPECT_DOUBLE_EQ(dtoh->per_step, 1);
  EXPECT_DOUBLE_EQ(dtoh->bytes_per_step, 4);
  EXPECT_DOUBLE_EQ(c.memsets_per_step.value_or(-1), 1);
  EXPECT_DOUBLE_EQ(c.syncs_per_step.value_or(-1), 1);
  ASSERT_NE(named(c.syncs, "cudaStreamSynchronize"), nullptr);
}

TEST(ProfiledCounts, AStepThatDidMoreWorkIsNotSteady) {
  CudaSteps c = two_steps();
  // The second step's forward calls one more op (a recompile, a data-dependent branch).
  std::int64_t last_forward = -1;
  for (std::size_t i = 0; i < c.s.events.size(); ++i)
    if (c.s.events[i].name == "tipbench::forward") last_forward = static_cast<std::int64_t>(i);
  c.op("aten::relu", 135, 138, last_forward);
  const StepCounts counts = tipbench::count_profiled_steps(c.s);
  EXPECT_FALSE(counts.steady);
  EXPECT_DOUBLE_EQ(counts.ops_per_step, 7.5);
}

TEST(ProfiledCounts, ACpuListCountsOpsAndTheCpuAllocatorOnlyAndNoDeviceEvents) {
  CudaSteps c = two_steps();
  c.s.device_type = "cpu";
  for (auto& e : c.s.events)
    if (e.kind == ProfiledKind::allocation) e.device_type = "cpu";
  const StepCounts counts = tipbench::count_profiled_steps(c.s);
  EXPECT_DOUBLE_EQ(counts.ops_per_step, 7);
  EXPECT_DOUBLE_EQ(counts.allocations_per_step, 1);
  EXPECT_FALSE(counts.kernels_per_step.has_value());
  EXPECT_FALSE(counts.syncs_per_step.has_value());
  EXPECT_TRUE(counts.copies.empty());
}

TEST(ProfiledCounts, NamesThatAreOpsSyncsAndCopyDirections) {
  EXPECT_TRUE(tipbench::is_dispatched_op("aten::add_"));
  EXPECT_TRUE(tipbench::is_dispatched_op("c10d::allreduce_"));
  EXPECT_FALSE(tipbench::is_dispatched_op("tipbench::forward"));
  EXPECT_FALSE(tipbench::is_dispatched_op("autograd::engine::evaluate_function: AddmmBackward0"));
  EXPECT_FALSE(tipbench::is_dispatched_op("AddmmBackward0"));
  EXPECT_FALSE(tipbench::is_dispatched_op("Optimizer.step#SGD.step"));
  EXPECT_TRUE(tipbench::is_host_sync("cudaDeviceSynchronize"));
  EXPECT_TRUE(tipbench::is_host_sync("cudaMemcpy"));
  EXPECT_FALSE(tipbench::is_host_sync("cudaMemcpyAsync"));
  EXPECT_FALSE(tipbench::is_host_sync("cudaStreamWaitEvent"));  // the device waits, not the host
  EXPECT_EQ(tipbench::copy_direction("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD");
  EXPECT_EQ(tipbench::copy_direction("Memcpy DtoD"), "Memcpy DtoD");
}

TEST(ProfiledCounts, ACopysBytesSurviveTheFixtureFormat) {
  const auto steps = two_steps().s;
  const auto back = tipbench::profiled_steps_from_json(tipbench::profiled_steps_to_json(steps));
  const StepCounts a = tipbench::count_profiled_steps(steps), b = tipbench::count_profiled_steps(back);
  ASSERT_NE(named(b.copies, "Memcpy DtoH"), nullptr);
  EXPECT_DOUBLE_EQ(named(b.copies, "Memcpy DtoH")->bytes_per_step, named(a.copies, "Memcpy DtoH")->bytes_per_step);
}

}  // namespace
