#include "fp32_math.h"

#include <ATen/Context.h>
#include <torch/version.h>

#include <fmt/format.h>

#include <string>

namespace tipbench::suites {

namespace {

std::string matmul_precision_name(at::Float32MatmulPrecision p) {
  switch (p) {
    case at::Float32MatmulPrecision::HIGHEST: return "highest";
    case at::Float32MatmulPrecision::HIGH: return "high";
    case at::Float32MatmulPrecision::MEDIUM: return "medium";
  }
  return "highest";
}

}  // namespace

std::function<void()> set_fp32_math(Fp32Math math) {
  auto& ctx = at::globalContext();
  const std::string matmul_before = matmul_precision_name(ctx.float32MatmulPrecision());
  const bool cudnn_before = ctx.allowTF32CuDNN();
  ctx.setFloat32MatmulPrecision(math == Fp32Math::tf32 ? "high" : "highest");
  ctx.setAllowTF32CuDNN(math != Fp32Math::ieee);
  return [matmul_before, cudnn_before] {
    at::globalContext().setFloat32MatmulPrecision(matmul_before);
    at::globalContext().setAllowTF32CuDNN(cudnn_before);
  };
}

nlohmann::json fp32_math_info() {
  auto& ctx = at::globalContext();
  return {{"tf32_api", fmt::format("legacy setters (setFloat32MatmulPrecision, setAllowTF32CuDNN) of LibTorch {}.{}",
                                   TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR)},
          {"matmul_precision", matmul_precision_name(ctx.float32MatmulPrecision())},
          {"cublas_tf32", ctx.allowTF32CuBLAS()},
          {"cudnn_tf32", ctx.allowTF32CuDNN()}};
}

}  // namespace tipbench::suites
