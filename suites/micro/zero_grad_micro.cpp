// The cost of optimizer.zero_grad() alone over ResNet-50's parameter list (161 tensors, 25.6M
// elements): set_to_none=false launches one fill per gradient; true only drops references.
// On CUDA the time comes from events on the stream (UseManualTime), on CPU from the wall clock.
//   build/suites/micro/tipbench_micro --benchmark_filter=ZeroGrad --benchmark_repetitions=9
#include "tipbench/models/model.h"

#include <ATen/cuda/CUDAEvent.h>
#include <benchmark/benchmark.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

namespace {

struct ParameterList {
  std::vector<torch::Tensor> params;
  std::vector<torch::Tensor> grads;  // kept so set_to_none can be undone outside the timing
  std::unique_ptr<torch::optim::SGD> optimizer;

  explicit ParameterList(torch::Device device) {
    auto model = tipbench::models::make_model("resnet50");
    model.ptr()->to(device);
    for (auto& p : model.ptr()->parameters()) {
      params.push_back(p);
      grads.push_back(torch::ones_like(p));
    }
    optimizer = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.1));
    restore_grads();
  }
  void restore_grads() {
    for (std::size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = grads[i];
  }
};

void BM_ZeroGrad(benchmark::State& state) {
  const bool set_to_none = state.range(0) != 0;
  const bool cuda = state.range(1) != 0;
  if (cuda && !torch::cuda::is_available()) {
    state.SkipWithError("no CUDA device here");
    return;
  }
  ParameterList list(cuda ? torch::kCUDA : torch::kCPU);
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  for (auto _ : state) {
    if (cuda) start.record(c10::cuda::getCurrentCUDAStream());
    list.optimizer->zero_grad(set_to_none);
    if (cuda) {
      stop.record(c10::cuda::getCurrentCUDAStream());
      stop.synchronize();
      state.SetIterationTime(start.elapsed_time(stop) / 1000.0);
    }
    state.PauseTiming();
    list.restore_grads();
    state.ResumeTiming();
  }
  state.counters["tensors"] = static_cast<double>(list.params.size());
}

// CUDA rows use event time; CPU rows the wall clock.
BENCHMARK(BM_ZeroGrad)->ArgNames({"set_to_none", "cuda"})->Args({0, 0})->Args({1, 0})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ZeroGrad)
    ->ArgNames({"set_to_none", "cuda"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
