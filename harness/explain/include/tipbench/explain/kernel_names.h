// A CUDA kernel's name as the breakdowns key it: Kineto's demangled name without "void ", template
// arguments, parameter list and trailing hashes, so the same kernel has one name across shapes,
// builds and runs:
// "void at::native::vectorized_elementwise_kernel<4, F, ...>(int, F, ...)" ->
// "at::native::vectorized_elementwise_kernel".
#pragma once

#include <string>

namespace tipbench {

std::string normalised_kernel_name(const std::string& raw);

}  // namespace tipbench
