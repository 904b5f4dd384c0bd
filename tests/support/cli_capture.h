// Runs the tipbench command line in this process (tipbench::cli::main) with stdout and stderr
// captured, for tests that link tipbench_cli.
//   const auto o = tipbench::testing::cli({"run", "--quick", "--suite", "zero_grad"});
//   EXPECT_EQ(o.code, tipbench::exit_code::ok) << o.err;
#pragma once

#include "cli/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tipbench::testing {

struct CliOutcome {
  int code = -1;
  std::string out;
  std::string err;
};

// `args` without the program name ("tipbench" is put in front).
inline CliOutcome cli(std::vector<std::string> args) {
  args.insert(args.begin(), "tipbench");
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliOutcome o;
  o.code = tipbench::cli::main(args);
  o.out = ::testing::internal::GetCapturedStdout();
  o.err = ::testing::internal::GetCapturedStderr();
  return o;
}

}  // namespace tipbench::testing
