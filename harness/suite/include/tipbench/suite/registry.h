// Suites register themselves from their own file; the CLI lists and looks them up here.
//   TIPBENCH_REGISTER_SUITE(ZeroGrad);                 // at namespace scope in suites/zero_grad.cpp
//   const tipbench::Suite* s = tipbench::find_suite("zero_grad");
#pragma once

#include "tipbench/suite/suite.h"

#include <memory>
#include <string>
#include <vector>

namespace tipbench {

bool register_suite(std::unique_ptr<Suite> suite);
// All registered suites, in the order of suites/CMakeLists.txt (the registration order).
std::vector<const Suite*> all_suites();
const Suite* find_suite(const std::string& name);  // nullptr when unknown
std::vector<std::string> suite_names();

// Every option the registered suites declare, once per name, with the suites that declare it (in
// registration order). Two suites may share an option only with the same type, default and
// choices; anything else is a programming error (std::logic_error).
struct DeclaredOption {
  SuiteOption option;
  std::vector<std::string> suites;
};
std::vector<DeclaredOption> declared_options();

}  // namespace tipbench

#define TIPBENCH_REGISTER_SUITE(Type) \
  [[maybe_unused]] static const bool tipbench_registered_##Type = ::tipbench::register_suite(std::make_unique<Type>())
