#include "determinism.h"

#include <ATen/Context.h>

#include <cstdlib>

namespace tipbench::suites {

Determinism current_determinism() {
  const auto& ctx = at::globalContext();
  return {ctx.deterministicAlgorithms(), ctx.deterministicCuDNN(), ctx.benchmarkCuDNN()};
}

void apply(const Determinism& d) {
  auto& ctx = at::globalContext();
  ctx.setDeterministicAlgorithms(d.algorithms, /*warn_only=*/false);
  ctx.setDeterministicCuDNN(d.cudnn_deterministic);
  ctx.setBenchmarkCuDNN(d.cudnn_benchmark);
}

nlohmann::json determinism_info() {
  const auto& ctx = at::globalContext();
  const char* workspace = std::getenv(kCublasWorkspaceVariable);
  return {{"deterministic_algorithms", ctx.deterministicAlgorithms()},
          {"cudnn_deterministic", ctx.deterministicCuDNN()},
          {"cudnn_benchmark", ctx.benchmarkCuDNN()},
          {"fill_uninitialized_memory", ctx.deterministicFillUninitializedMemory()},
          {"cublas_workspace_config", workspace == nullptr ? "" : workspace}};
}

}  // namespace tipbench::suites
