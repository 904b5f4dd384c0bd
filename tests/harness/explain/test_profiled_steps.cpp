// `run --explain`'s reduction of profiled events to a step breakdown (profiled_steps.h), on event
// lists built by hand to PyTorch 2.11's profiler semantics (torch/csrc/profiler/collection.cpp:
// a kernel's parent is the runtime call that launched it, that call's parent the op it ran in,
// the kernel's `linked` the op Kineto correlated; the autograd engine's device thread reaches the
// main thread's open scope; Kineto projects a GPU span per user scope), since a CPU records no
// kernel. The lists a GPU records replace or join these when the first call brings them back
// (docs/gpu.md, "The first call"): then the same checks run on them.
#include "tipbench/explain/explain.h"
#include "tipbench/explain/profiled_steps.h"

#include "cuda_event_list.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace {

using tipbench::BreakdownKey;
using tipbench::ProfiledEvent;
using tipbench::ProfiledKind;
using tipbench::ProfiledSteps;
using tipbench::StepBreakdown;
using tipbench::testing::CudaSteps;
using tipbench::testing::kEngine;
using tipbench::testing::kMain;
using tipbench::testing::kUs;

const BreakdownKey* key(const StepBreakdown& b, const std::string& phase, const std::string& op) {
  for (const auto& k : b.keys) {
    if (k.phase == phase && k.op == op) return &k;
  }
  return nullptr;
}

// One training step of 100 us on the host, pipelined: the device runs the lead-in step's work
// until 30 us. Forward: an addmm whose op starts at 10 but launches at 20 (after the device went
// idle at 30? no: before), a relu launched at 45 after the device idled at 40. Backward on the
// engine thread: mm's kernel. Optimizer: a foreach kernel launched through the driver API.
CudaSteps one_training_step() {
  CudaSteps c;
  auto& s = c.s;
  s.steps = 1;
  s.wall_ms = 0.1;
  const auto lead = c.op("tipbench::lead_in", 0, 9, -1);
  const auto lead_op = c.op("aten::addmm", 1, 8, lead);
  c.kernel("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)", 2, 5, 30, lead_op);
  const auto step = c.op("tipbench::step", 10, 110, -1);
  const auto forward = c.op("tipbench::forward", 10, 50, step);
  c.annotation("tipbench::forward", 30, 60, step);  // Kineto's GPU span over forward's kernels
  const auto addmm = c.op("aten::addmm", 10, 25, forward);
  c.kernel("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)", 20, 30, 40, addmm);
  const auto relu = c.op("aten::relu", 41, 48, forward);
  // launched at 45, after the device went idle at 40: it waited 5 us... and more for the op's own
  // dispatch from 41, which an op-start launch time would misread as "other" (41 > 40 too here).
  c.kernel("void at::native::(anonymous namespace)::relu_kernel<float>(float*)", 45, 48, 52, relu);
  const auto backward = c.op("tipbench::backward", 50, 80, step);
  const auto node = c.op("autograd::engine::evaluate_function: AddmmBackward0", 51, 70, backward, kEngine);
  const auto mm = c.op("aten::mm", 52, 60, node, kEngine);
  c.kernel("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(Params)", 55, 58, 75, mm,
           kEngine);
  const auto optimizer = c.op("tipbench::optimizer", 80, 105, step);
  const auto foreach = c.op("aten::_foreach_add_", 81, 104, optimizer);
  c.kernel(
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<TensorListMetadata<2>, "
      "BinaryOpListAlphaFunctor<float>>(TensorListMetadata<2>, BinaryOpListAlphaFunctor<float>)",
      90, 95, 100, foreach, kMain, "cuLaunchKernelEx");
  // A kernel on another GPU (an in-process multi-GPU arm): not this device's time.
  c.kernel("void other_gpu_kernel(float*)", 91, 92, 99, foreach, kMain, "cudaLaunchKernel", ProfiledKind::kernel, 1);
  return c;
}

// Kineto's GPU spans of user scopes are no work: no key holds a kernel named after a scope, and
// forward's device time is its kernels' alone (20 us), not the span's 30 us on top.
TEST(ProfiledSteps, ScopeSpansOnTheGpuAreNeverCountedAsKernels) {
  const auto b = tipbench::reduce_profiled_steps(one_training_step().s);
  for (const auto& k : b.keys) {
    for (const auto& kernel : k.kernels) EXPECT_FALSE(kernel.name.starts_with("tipbench::")) << k.phase << " " << k.op;
  }
  const auto* addmm = key(b, "forward", "aten::addmm");
  ASSERT_NE(addmm, nullptr);
  EXPECT_DOUBLE_EQ(addmm->ms_per_step, 0.010);
  EXPECT_EQ(key(b, "step", "[outside ops]"), nullptr) << "no device time outside ops";
}

// Each kernel sits under the op that launched it, through its runtime call; a backward op on the
// engine's thread is in phase backward; the lead-in step's ops and kernels are not counted.
TEST(ProfiledSteps, KernelsSitUnderTheOpsThatLaunchedThemInTheirPhase) {
  const auto b = tipbench::reduce_profiled_steps(one_training_step().s);
  const auto* addmm = key(b, "forward", "aten::addmm");
  ASSERT_NE(addmm, nullptr);
  EXPECT_DOUBLE_EQ(addmm->calls_per_step, 1) << "the lead-in's addmm is not counted";
  ASSERT_EQ(addmm->kernels.size(), 1u);
  EXPECT_EQ(addmm->kernels[0].name, "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>");
  const auto* mm = key(b, "backward", "aten::mm");
  ASSERT_NE(mm, nullptr) << "the engine thread's op is in phase backward";
  EXPECT_DOUBLE_EQ(mm->ms_per_step, 0.017);
  const auto* relu = key(b, "forward", "aten::relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->kernels.at(0).name, "at::native::(anonymous namespace)::relu_kernel");
  const auto* foreach = key(b, "optimizer", "aten::_foreach_add_");
  ASSERT_NE(foreach, nullptr) << "a driver-API launch reaches its op too";
  EXPECT_DOUBLE_EQ(foreach->ms_per_step, 0.005) << "the other GPU's kernel is left out";
  EXPECT_EQ(foreach->kernels.at(0).name, "at::native::(anonymous namespace)::multi_tensor_apply_kernel");
  ASSERT_TRUE(b.device_events_per_step);
  EXPECT_DOUBLE_EQ(*b.device_events_per_step, 4);
}

// Idle time, HTA's way: the gap before relu's kernel (device idle from 40, launch at 45) waited for
// the host although relu's op began at 41; the gap before mm's kernel (idle from 52, launched at
// 55) too; the foreach kernel (idle from 75, launched at 90) too; the tail (100 to the step's end
// at 110) is the host's; nothing waited for anything else. Busy 30-40, 48-52, 58-75, 95-100 in the
// window 10-110: the lead-in's kernel keeps the device busy from 10 to 30.
TEST(ProfiledSteps, IdleGapsAreTheHostsWhenTheLaunchCameAfterTheDeviceWentIdle) {
  const auto b = tipbench::reduce_profiled_steps(one_training_step().s);
  ASSERT_TRUE(b.gpu_idle_host_wait_ms && b.gpu_idle_other_ms);
  EXPECT_NEAR(*b.gpu_idle_host_wait_ms, (8 + 6 + 20 + 10) / 1000.0, 1e-12);
  EXPECT_NEAR(*b.gpu_idle_other_ms, 0.0, 1e-12);
}

// A CUDA graph replay: every kernel under one cudaGraphLaunch, no op, no allocation. Its keys say
// so, its inner gaps are not the host's (the launch came before), and its memory peak is what was
// allocated when the steps began, less the other kept arms' (no event at all to read a total from).
TEST(ProfiledSteps, AGraphReplayIsOneKeyWithItsMemoryAndNoHostWait) {
  CudaSteps c;
  c.s.steps = 1;
  c.s.allocated_at_start = 5'000'000'000;
  c.s.held_by_others = 1'000'000'000;
  c.op("tipbench::lead_in", 0, 5, -1);
  const auto step = c.op("tipbench::step", 10, 20, -1);
  const auto launch = c.add({.kind = ProfiledKind::runtime,
                             .name = "cudaGraphLaunch",
                             .start_ns = 11 * kUs,
                             .end_ns = 14 * kUs,
                             .thread = kMain,
                             .parent = step});
  for (std::int64_t k = 0; k < 3; ++k) {
    c.add({.kind = ProfiledKind::kernel,
           .name = "void at::native::vectorized_elementwise_kernel<4>(int)",
           .start_ns = (15 + 10 * k) * kUs,
           .end_ns = (20 + 10 * k) * kUs,
           .parent = launch,
           .device = 0,
           .stream = 3});
  }
  c.annotation("tipbench::step", 15, 40, step);
  const auto b = tipbench::reduce_profiled_steps(c.s);
  ASSERT_EQ(b.keys.size(), 1u);
  EXPECT_EQ(b.keys[0].op, tipbench::kGraphReplay);
  EXPECT_DOUBLE_EQ(b.keys[0].ms_per_step, 0.015) << "three kernels, the span not counted";
  // The window is 10-20 us: idle 10-15 before the first kernel, which was launched at 11, before
  // the device went idle? No: the device was idle from 10 (window start) and the launch call came
  // at 11, after it: the host's. The later kernels start after 20, outside the window.
  EXPECT_NEAR(*b.gpu_idle_host_wait_ms, 0.005, 1e-12);
  EXPECT_EQ(b.memory_device, "cuda");
  EXPECT_EQ(b.peak_bytes, 4'000'000'000);
  ASSERT_EQ(b.peak.size(), 1u);
  EXPECT_EQ(b.peak[0].op, tipbench::kLiveBefore);
}

// Inside a replay the kernels were all launched by one call before the device went idle between
// them: those gaps waited for something else (a dependency), never for the host. So does a
// kernel whose launch is unknown (no runtime record, only the correlated op).
TEST(ProfiledSteps, GapsBeforeKernelsLaunchedEarlierOrUnknownAreNotTheHosts) {
  CudaSteps c;
  c.s.steps = 1;
  const auto step = c.op("tipbench::step", 0, 100, -1);
  const auto launch = c.add({.kind = ProfiledKind::runtime,
                             .name = "cudaGraphLaunch",
                             .start_ns = 0,
                             .end_ns = 2 * kUs,
                             .thread = kMain,
                             .parent = step});
  for (std::int64_t k = 0; k < 3; ++k) {
    c.add({.kind = ProfiledKind::kernel,
           .name = "k",
           .start_ns = (10 + 30 * k) * kUs,
           .end_ns = (30 + 30 * k) * kUs,
           .parent = launch,
           .device = 0});
  }
  const auto op = c.op("aten::mul", 3, 5, step);
  c.add({.kind = ProfiledKind::kernel,
         .name = "orphan",
         .start_ns = 95 * kUs,
         .end_ns = 98 * kUs,
         .linked = op,
         .device = 0});
  const auto b = tipbench::reduce_profiled_steps(c.s);
  // 0-10 waited for the host (launched at 0, the device idle from 0: launch >= idle start),
  // 30-40 and 60-70 for something else, 90-95 before the orphan too, 98-100 the tail.
  EXPECT_NEAR(*b.gpu_idle_host_wait_ms, (10 + 2) / 1000.0, 1e-12);
  EXPECT_NEAR(*b.gpu_idle_other_ms, (10 + 10 + 5) / 1000.0, 1e-12);
  const auto* orphan = key(b, "step", "aten::mul");
  ASSERT_NE(orphan, nullptr) << "a kernel without a runtime parent follows its correlated op";
}

// The memory at the allocator's largest total in the steps, less what other kept arms hold; the
// steps' own live blocks by their ops, the rest live before.
TEST(ProfiledSteps, TheCudaPeakIsTheAllocatorsLargestTotalLessOtherArmsHeld) {
  CudaSteps c;
  c.s.steps = 1;
  c.s.allocated_at_start = 1000;
  c.s.held_by_others = 300;
  const auto step = c.op("tipbench::step", 0, 100, -1);
  const auto fwd = c.op("tipbench::forward", 0, 50, step);
  const auto conv = c.op("aten::cudnn_convolution", 1, 10, fwd);
  const auto empty = c.op("aten::empty", 2, 3, conv);
  c.alloc(2, 0xa, 200, 1200, empty);  // charged to the convolution, which asked for it
  const auto relu = c.op("aten::relu", 11, 20, fwd);
  c.alloc(12, 0xb, 100, 1300, relu);
  c.alloc(30, 0xa, -200, 1100, fwd);
  const auto bwd = c.op("tipbench::backward", 50, 90, step);
  c.alloc(60, 0xc, 150, 1250, bwd);  // below the peak of 1300
  const auto b = tipbench::reduce_profiled_steps(c.s);
  EXPECT_EQ(b.peak_bytes, 1000);  // 1300 - 300
  std::int64_t conv_bytes = 0, relu_bytes = 0, before = 0;
  for (const auto& m : b.peak) {
    if (m.op == "aten::cudnn_convolution") conv_bytes = m.bytes;
    if (m.op == "aten::relu") relu_bytes = m.bytes;
    if (m.op == tipbench::kLiveBefore) before = m.bytes;
  }
  EXPECT_EQ(conv_bytes, 200);
  EXPECT_EQ(relu_bytes, 100);
  EXPECT_EQ(before, 700) << "1000 at the start, less 300 other arms hold";
}

TEST(ProfiledSteps, AFixtureReadsBackAsItWasAndABadOneIsRefused) {
  const auto steps = one_training_step().s;
  const auto j = tipbench::profiled_steps_to_json(steps);
  const auto back = tipbench::profiled_steps_from_json(j);
  EXPECT_EQ(tipbench::profiled_steps_to_json(back), j);
  EXPECT_EQ(tipbench::breakdown_to_json(tipbench::reduce_profiled_steps(back)),
            tipbench::breakdown_to_json(tipbench::reduce_profiled_steps(steps)));

  auto circle = j;
  circle["events"][0]["parent"] = 1;
  circle["events"][1]["parent"] = 0;
  EXPECT_THROW(tipbench::profiled_steps_from_json(circle), std::invalid_argument);
  auto outside = j;
  outside["events"][0]["parent"] = 100000;
  EXPECT_THROW(tipbench::profiled_steps_from_json(outside), std::invalid_argument);
  auto control = j;
  control["events"][0]["name"] = "aten::mm\x1b[2J";
  EXPECT_THROW(tipbench::profiled_steps_from_json(control), std::invalid_argument);
  auto kind = j;
  kind["events"][0]["kind"] = "quantum";
  EXPECT_THROW(tipbench::profiled_steps_from_json(kind), std::invalid_argument);
}

// Event lists a real run recorded (the first call's fixtures, brought in by
// scripts/import_fixtures.py into tests/fixtures/profiled/<kind>/): each reduces here to exactly
// the breakdown its trial recorded then, and holds what the synthetic lists above promise — no
// scope span among the kernels, idle time and device work that are never negative. A GPU kind's
// lists join the CPU's when a first call brings them back.
TEST(ProfiledSteps, RecordedListsReduceToTheBreakdownsTheirRunsRecorded) {
  const std::filesystem::path root = std::filesystem::path(TIPBENCH_SOURCE_DIR) / "tests/fixtures/profiled";
  int pairs = 0, cuda = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto pair = nlohmann::ordered_json::parse(in);
    const auto steps = tipbench::profiled_steps_from_json(pair.at("profiled"));
    const auto reduced = tipbench::reduce_profiled_steps(steps);
    const auto recorded = tipbench::breakdown_from_json(pair.at("recorded_breakdown"));
    EXPECT_EQ(tipbench::breakdown_to_json(reduced).dump(), tipbench::breakdown_to_json(recorded).dump())
        << entry.path();
    for (const auto& k : reduced.keys) {
      EXPECT_GE(k.ms_per_step, 0) << entry.path();
      for (const auto& kernel : k.kernels) EXPECT_FALSE(kernel.name.starts_with("tipbench::")) << entry.path();
    }
    if (steps.device_type == "cuda") {
      ++cuda;
      EXPECT_GE(reduced.gpu_idle_host_wait_ms.value_or(-1), 0) << entry.path();
      EXPECT_GT(reduced.device_events_per_step.value_or(0), 0) << entry.path();
      EXPECT_GT(reduced.peak_bytes, 0) << entry.path();
    }
    ++pairs;
  }
  EXPECT_GE(pairs, 1) << "no recorded event list under " << root;
  std::cout << pairs << " recorded list(s), " << cuda << " of them a GPU's\n";
}

}  // namespace
