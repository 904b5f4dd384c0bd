// The pointwise blocks of the jit_fusion suite alone, over tensor sizes: eager (one kernel per
// op) vs TorchScript (compiled with torch::jit::compile; its profiling runs happen before the
// timed loop) vs ATen's native fused op. Counters: `fused` (1 when the optimized graph holds a
// fusion group, read from the graph) and `fusion_groups`; items = tensor elements; the label
// names the block, implementation and pass.
//   build/suites/micro/tipbench_micro --benchmark_filter=Pointwise
//   Name: BM_Pointwise/block:1/impl:1/rows:2048/backward:0/cuda:0
//   block 0 gelu, 1 bias_gelu, 2 bias_dropout_residual, 3 layer_norm; impl 0 eager, 1 torchscript, 2 native
// CUDA rows use event time (UseManualTime) and report an error row when no GPU exists.
#include "jit_fusion/pointwise.h"
#include "jit_fusion/torchscript.h"

#include <ATen/cuda/CUDAEvent.h>
#include <benchmark/benchmark.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <optional>
#include <string>

namespace {

using tipbench::suites::PointwiseBlock;

std::int64_t columns(PointwiseBlock block) {
  return block == PointwiseBlock::gelu || block == PointwiseBlock::bias_gelu ? 3072 : 768;
}

void BM_Pointwise(benchmark::State& state) {
  namespace s = tipbench::suites;
  const auto block = s::all_pointwise_blocks().at(static_cast<std::size_t>(state.range(0)));
  const auto impl = state.range(1);
  const std::int64_t rows = state.range(2);
  const bool backward = state.range(3) != 0;
  const bool cuda = state.range(4) != 0;
  // Messages live in statics: older Google Benchmark keeps the pointer, not a copy.
  static const std::string no_script = s::torchscript_unavailable_reason().value_or("");
  static const std::string no_native = s::pointwise_native_missing(PointwiseBlock::bias_dropout_residual).value_or("");
  if (cuda && !torch::cuda::is_available()) return state.SkipWithError("no CUDA device here");
  if (impl == 1 && !no_script.empty()) return state.SkipWithError(no_script.c_str());
  if (impl == 2 && s::pointwise_native_missing(block)) return state.SkipWithError(no_native.c_str());

  const torch::Device device = cuda ? torch::kCUDA : torch::kCPU;
  torch::manual_seed(0);
  const auto in = s::make_pointwise_inputs(block, rows, columns(block), device, backward);
  const auto grad_out = torch::randn({rows, columns(block)}, torch::TensorOptions().device(device));
  std::optional<s::ScriptFunction> script;
  if (impl == 1) {
    script.emplace(s::pointwise_script(block), "f");
    const auto report = script->warm_up(s::pointwise_script_args(block, in));  // profiling runs, untimed
    state.counters["fused"] = report.fused() ? 1 : 0;
    state.counters["fusion_groups"] = report.fusion_groups;
  }
  auto run = [&] {
    torch::Tensor out = impl == 0   ? s::pointwise_eager(block, in)
                        : impl == 1 ? (*script)(s::pointwise_script_args(block, in))
                                    : s::pointwise_native(block, in);
    if (backward) torch::autograd::grad({out}, in.differentiable(), {grad_out});
    return out;
  };
  for (int i = 0; i < 3; ++i) run();  // allocator and kernel warm-up
  if (cuda) torch::cuda::synchronize();

  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  for (auto _ : state) {
    if (cuda) start.record(c10::cuda::getCurrentCUDAStream());
    benchmark::DoNotOptimize(run());
    if (cuda) {
      stop.record(c10::cuda::getCurrentCUDAStream());
      stop.synchronize();
      state.SetIterationTime(start.elapsed_time(stop) / 1000.0);
    }
  }
  state.SetItemsProcessed(state.iterations() * rows * columns(block));
  // The numeric arguments in words: "bias_gelu torchscript forward+backward".
  static constexpr const char* kImpls[] = {"eager", "torchscript", "native"};
  state.SetLabel(std::string(s::to_string(block)) + " " + kImpls[impl] + (backward ? " forward+backward" : " forward"));
}

// CPU rows use the wall clock (the main thread's CPU time would miss LibTorch's intra-op
// threads); CUDA rows event time.
BENCHMARK(BM_Pointwise)
    ->ArgNames({"block", "impl", "rows", "backward", "cuda"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}, {256, 2048, 16384}, {0, 1}, {0}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Pointwise)
    ->ArgNames({"block", "impl", "rows", "backward", "cuda"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}, {2048, 16384, 65536}, {0, 1}, {1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
