# Release builds at -O2, not CMake's -O3 (given after it, so it wins): the time measured is
# LibTorch's, built by PyTorch; -O3 made our own code's build 11% slower (docs/ARCHITECTURE.md).
set(TIPBENCH_RELEASE_OPTIMIZATION $<$<CONFIG:Release>:-O2>)

# tipbench_target_defaults(<target>): warnings and the shared precompiled header, per target
# (no global flags). Targets that include <torch/torch.h> pass TORCH to reuse one PCH.
function(tipbench_target_defaults target)
  cmake_parse_arguments(arg "TORCH" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter ${TIPBENCH_RELEASE_OPTIMIZATION})
  if(arg_TORCH AND TIPBENCH_USE_PCH)
    if(TARGET tipbench_pch AND NOT target STREQUAL "tipbench_pch")
      target_precompile_headers(${target} REUSE_FROM tipbench_pch)
    endif()
  endif()
endfunction()

# tipbench_add_torch_executable(<name> SOURCES ...): an executable whose sources include
# <torch/torch.h>. They compile in an OBJECT library (position-independent like the shared PCH;
# an executable's -fPIE would make GCC reject it), which the executable then links.
function(tipbench_add_torch_executable name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${name}_objects OBJECT ${arg_SOURCES})
  target_link_libraries(${name}_objects PUBLIC ${arg_LIBS})
  tipbench_target_defaults(${name}_objects TORCH)
  add_executable(${name} $<TARGET_OBJECTS:${name}_objects>)
  target_link_libraries(${name} PRIVATE ${name}_objects)
endfunction()
