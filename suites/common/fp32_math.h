// How CUDA multiplies fp32 tensors: two process-wide knobs of ATen's global context, cuBLAS's
// matmul precision ("highest" IEEE fp32, "high" TF32) and cuDNN's allow_tf32 for convolutions.
// PyTorch's defaults are mixed (aten/src/ATen/Context.h): matmuls "highest", cuDNN TF32 on.
// The tf32 suite compares IEEE with TF32; amp compares its 16-bit arms with both fp32s. Example:
//   const auto restore = set_fp32_math(Fp32Math::ieee);
//   ... build and run the workload ...
//   restore();
// Only the legacy setters are used: mixing them with 2.9's setFloat32Precision makes the getters
// throw (../shared/LIBTORCH.md).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>

namespace tipbench::suites {

enum class Fp32Math {
  pytorch_default,  // matmuls IEEE ("highest"), convolutions TF32 (cuDNN allow_tf32 true)
  ieee,             // IEEE fp32 everywhere: "highest", cuDNN TF32 off
  tf32,             // TF32 everywhere: "high", cuDNN TF32 on
};

// Sets both knobs; returns what puts the process's previous values back.
std::function<void()> set_fp32_math(Fp32Math math);

// What the library reads back (the API used, the matmul precision, cuBLAS's and cuDNN's TF32
// flags), for an arm's info: the result shows what the library did with the request.
nlohmann::json fp32_math_info();

}  // namespace tipbench::suites
