// The tipbench binary under test (TIPBENCH_BINARY, test_paths.h) run in a child process, its
// stdout and stderr kept in `logs` (stdout.txt, stderr.txt): the end-to-end tests' one way to run it.
//   const auto o = tipbench::testing::tipbench_cmd(dir, {"compare", a, b});
//   EXPECT_EQ(o.code, 2) << o.err;
#pragma once

#include "child_process.h"
#include "test_paths.h"

#include <filesystem>
#include <string>
#include <vector>

namespace tipbench::testing {

inline ChildOutcome tipbench_cmd(const std::filesystem::path& logs, std::vector<std::string> args) {
  args.insert(args.begin(), TIPBENCH_BINARY);
  return run_child(args, logs / "stdout.txt", logs / "stderr.txt");
}

}  // namespace tipbench::testing
