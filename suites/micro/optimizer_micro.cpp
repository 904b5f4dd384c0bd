// optimizer.step() alone over ResNet-50's parameter list (161 tensors, 25.6M elements) for SGD
// with momentum and AdamW in the three implementations of common/optimizers.h: the per-parameter
// loop, foreach and fused. On CUDA the time comes from events on the stream (UseManualTime), on
// CPU from the wall clock. A fused kernel this LibTorch lacks on a device is skipped with the reason.
//   build/suites/micro/tipbench_micro --benchmark_filter=OptimizerStep --benchmark_repetitions=9
#include "common/optimizers.h"
#include "tipbench/models/model.h"

#include <ATen/cuda/CUDAEvent.h>
#include <benchmark/benchmark.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

namespace {

using tipbench::suites::OptimizerChoice;
using tipbench::suites::OptimizerImpl;
using tipbench::suites::OptimizerKind;

void BM_OptimizerStep(benchmark::State& state) {
  const OptimizerChoice choice{static_cast<OptimizerKind>(state.range(0)), static_cast<OptimizerImpl>(state.range(1))};
  const bool cuda = state.range(2) != 0;
  if (cuda && !torch::cuda::is_available()) {
    state.SkipWithError("no CUDA device here");
    return;
  }
  const torch::Device device = cuda ? torch::kCUDA : torch::kCPU;
  if (auto why = tipbench::suites::optimizer_unsupported_reason(device, choice)) {
    state.SkipWithError(why->c_str());
    return;
  }
  auto model = tipbench::models::make_model("resnet50");
  model.ptr()->to(device);
  auto params = model.ptr()->parameters();
  for (auto& p : params) p.mutable_grad() = 1e-3 * torch::randn_like(p);
  auto optimizer = tipbench::suites::make_optimizer(choice, params);
  optimizer->step();  // the state (momentum, moments) exists before timing
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  for (auto _ : state) {
    if (cuda) start.record(c10::cuda::getCurrentCUDAStream());
    optimizer->step();
    if (cuda) {
      stop.record(c10::cuda::getCurrentCUDAStream());
      stop.synchronize();
      state.SetIterationTime(start.elapsed_time(stop) / 1000.0);
    }
  }
  state.counters["tensors"] = static_cast<double>(params.size());
  state.SetLabel(std::string(tipbench::suites::optimizer_kind_name(choice.kind)) + "/" +
                 tipbench::suites::optimizer_impl_name(choice.impl));
}

void all_implementations(benchmark::internal::Benchmark* b, int cuda) {
  for (int kind : {0, 1}) {
    for (int impl : {0, 1, 2}) b->Args({kind, impl, cuda});
  }
}

// Args: kind (0 sgd, 1 adamw), impl (0 loop, 1 foreach, 2 fused), cuda. CUDA rows use event time.
BENCHMARK(BM_OptimizerStep)->ArgNames({"kind", "impl", "cuda"})->Apply([](auto* b) {
                                                                 all_implementations(b, 0);
                                                               }) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_OptimizerStep)->ArgNames({"kind", "impl", "cuda"})->Apply([](auto* b) {
                                                                 all_implementations(b, 1);
                                                               }) -> UseManualTime() -> Unit(benchmark::kMicrosecond);

}  // namespace
