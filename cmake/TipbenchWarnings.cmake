# tipbench_target_defaults(<target>): warnings and the shared precompiled header, per target
# (no global flags). Targets that include <torch/torch.h> pass TORCH to reuse one PCH.
function(tipbench_target_defaults target)
  cmake_parse_arguments(arg "TORCH" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(arg_TORCH AND TIPBENCH_USE_PCH)
    if(TARGET tipbench_pch AND NOT target STREQUAL "tipbench_pch")
      target_precompile_headers(${target} REUSE_FROM tipbench_pch)
    endif()
  endif()
endfunction()
