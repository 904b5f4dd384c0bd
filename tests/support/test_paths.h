// Paths the tests take from the build, each overridable at run time by the environment variable
// of the same name. The build passes TIPBENCH_BUILT_<X> (an absolute path in this build tree);
// TIPBENCH_<X> is the environment's value when set and non-empty, else that default. The device
// bundle (scripts/bundle.sh) runs the test binaries on machines where the build tree does not
// exist, and its run.sh points these variables at the bundle's own copies.
//   #include "test_paths.h"
//   run_child({TIPBENCH_BINARY, "list"}, ...);          // $TIPBENCH_BINARY or the built tipbench
// The macros are `const char*` expressions, not string literals: concatenate with std::string.
#pragma once

#include <cstdlib>

namespace tipbench::testing {

inline const char* path_from_env(const char* variable, const char* built) {
  const char* value = std::getenv(variable);
  return (value != nullptr && *value != '\0') ? value : built;
}

}  // namespace tipbench::testing

#ifdef TIPBENCH_BUILT_BINARY
#define TIPBENCH_BINARY (::tipbench::testing::path_from_env("TIPBENCH_BINARY", TIPBENCH_BUILT_BINARY))
#endif
#ifdef TIPBENCH_BUILT_STACK_B_BINARY
#define TIPBENCH_STACK_B_BINARY \
  (::tipbench::testing::path_from_env("TIPBENCH_STACK_B_BINARY", TIPBENCH_BUILT_STACK_B_BINARY))
#endif
#ifdef TIPBENCH_BUILT_SOURCE_DIR
#define TIPBENCH_SOURCE_DIR (::tipbench::testing::path_from_env("TIPBENCH_SOURCE_DIR", TIPBENCH_BUILT_SOURCE_DIR))
#endif
#ifdef TIPBENCH_BUILT_TORCHRUN
#define TIPBENCH_TORCHRUN (::tipbench::testing::path_from_env("TIPBENCH_TORCHRUN", TIPBENCH_BUILT_TORCHRUN))
#endif
#ifdef TIPBENCH_BUILT_PYTHON
#define TIPBENCH_PYTHON (::tipbench::testing::path_from_env("TIPBENCH_PYTHON", TIPBENCH_BUILT_PYTHON))
#endif
#ifdef TIPBENCH_BUILT_MAKE_REFERENCE
#define TIPBENCH_MAKE_REFERENCE \
  (::tipbench::testing::path_from_env("TIPBENCH_MAKE_REFERENCE", TIPBENCH_BUILT_MAKE_REFERENCE))
#endif
