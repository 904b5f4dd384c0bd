// The determinism knobs of torch.use_deterministic_algorithms(True) and the cuDNN flags that go
// with it, read and set as one value, so a suite or test can switch them on and put them back.
// Example:
//   const Determinism before = current_determinism();
//   apply(Determinism::deterministic());
//   ... train ...
//   apply(before);
#pragma once

#include <nlohmann/json.hpp>

namespace tipbench::suites {

struct Determinism {
  bool algorithms = false;  // at::Context deterministic algorithms (errors on ops without one)
  bool cudnn_deterministic = false;
  bool cudnn_benchmark = false;  // the autotuner may pick a different algorithm per run: off

  // What a user sets for reproducible runs: deterministic algorithms, cuDNN deterministic,
  // cuDNN benchmark off. (CUDA also needs CUBLAS_WORKSPACE_CONFIG before cuBLAS starts.)
  static Determinism deterministic() { return {true, true, false}; }
};

Determinism current_determinism();
void apply(const Determinism& d);
// The knobs as the library reads them back, plus whether empty tensors are filled (NaN), which
// deterministic algorithms turn on by default.
nlohmann::json determinism_info();

// The cuBLAS workspace setting deterministic cuBLAS needs on CUDA 10.2 and later, read once when
// the process's cuBLAS starts: set in the environment of a fresh process.
inline constexpr const char* kCublasWorkspaceVariable = "CUBLAS_WORKSPACE_CONFIG";
inline constexpr const char* kCublasWorkspaceDeterministic = ":4096:8";

}  // namespace tipbench::suites
