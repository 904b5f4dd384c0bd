# Locates LibTorch from the pinned PyPI wheel in the project's virtual environment
# (scripts/bootstrap.sh installs it) and exposes it as the imported target tipbench::torch.
set(TIPBENCH_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH
    "Python interpreter whose torch package provides LibTorch")

if(NOT Torch_DIR)
  execute_process(
    COMMAND "${TIPBENCH_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _tipbench_torch_prefix
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _tipbench_torch_rc)
  if(NOT _tipbench_torch_rc EQUAL 0)
    message(FATAL_ERROR
      "Cannot import torch with ${TIPBENCH_PYTHON}. Run scripts/bootstrap.sh (or pass "
      "-DTIPBENCH_PYTHON=/path/to/python with torch installed).")
  endif()
  list(APPEND CMAKE_PREFIX_PATH "${_tipbench_torch_prefix}")
endif()

# No GPU is needed to build: name the architectures instead of letting CMake probe a device.
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(ENV{TORCH_CUDA_ARCH_LIST} "8.0;9.0")
endif()
find_package(Torch REQUIRED)

# The wheel's include/ also carries fmt 12 headers, which would shadow the system fmt that we
# link. A build-tree directory holding only a link to the system's fmt headers goes first.
get_target_property(_tipbench_fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
find_path(_tipbench_fmt_root fmt/format.h HINTS ${_tipbench_fmt_includes} REQUIRED)
set(_tipbench_fmt_shadow "${PROJECT_BINARY_DIR}/fmt-first")
file(MAKE_DIRECTORY "${_tipbench_fmt_shadow}")
file(CREATE_LINK "${_tipbench_fmt_root}/fmt" "${_tipbench_fmt_shadow}/fmt" SYMBOLIC)

add_library(tipbench_torch INTERFACE)
target_link_libraries(tipbench_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(tipbench_torch SYSTEM INTERFACE "${_tipbench_fmt_shadow}" ${TORCH_INCLUDE_DIRS})
add_library(tipbench::torch ALIAS tipbench_torch)
# The wheel's own CUDA libraries (nvidia/*/lib beside torch/): libtorch_cuda.so loads them through
# its RUNPATH at run time, but the linker checking its symbols would otherwise take the system's
# copies (an older NCCL lacks symbols newer LibTorch releases use).
file(GLOB _tipbench_wheel_cuda_libs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
foreach(_dir IN LISTS _tipbench_wheel_cuda_libs)
  target_link_options(tipbench_torch INTERFACE "LINKER:-rpath-link,${_dir}")
endforeach()

# One precompiled header, reused by every target that includes LibTorch: <torch/torch.h> and the
# header-only libraries those targets parse in nearly every file (CLI11 alone took 3 s of a
# command's 10 s; docs/ARCHITECTURE.md, "Build").
if(TIPBENCH_USE_PCH)
  add_library(tipbench_pch OBJECT "${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cpp")
  target_link_libraries(tipbench_pch PUBLIC tipbench::torch CLI11::CLI11 nlohmann_json::nlohmann_json fmt::fmt)
  target_compile_options(tipbench_pch PRIVATE -Wall -Wextra -Wno-unused-parameter ${TIPBENCH_RELEASE_OPTIMIZATION})
  target_precompile_headers(tipbench_pch PRIVATE <torch/torch.h> <CLI/CLI.hpp> <nlohmann/json.hpp> <fmt/format.h>
                                                 <fmt/ranges.h>)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # Without the timestamp clang writes into a PCH, ccache can cache the translation units that
    # use it (ccache's manual, "Precompiled headers"; the sloppiness is in TipbenchCcache.cmake).
    target_compile_options(tipbench_pch PRIVATE -Xclang -fno-pch-timestamp)
  endif()
endif()
