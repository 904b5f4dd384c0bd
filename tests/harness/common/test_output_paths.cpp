// Fail fast on outputs: output_file_problem / output_dir_problem say why a path cannot be
// written before any work is done, and leave nothing behind when it can.
#include "tipbench/common/atomic_file.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

namespace {

using tipbench::output_dir_problem;
using tipbench::output_file_problem;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::write_bytes;

TEST(OutputFileProblem, NoneForAWritablePathAndNothingLeftBehind) {
  const auto dir = fresh_scratch_dir("output_ok");
  EXPECT_EQ(output_file_problem((dir / "r.json").string()), std::nullopt);
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{}) << "the probe file is removed";
  // Missing parents are created, as the write itself would.
  EXPECT_EQ(output_file_problem((dir / "a" / "b" / "r.json").string()), std::nullopt);
  EXPECT_EQ(list_dir(dir / "a" / "b"), std::vector<std::string>{});
  // An existing file is fine: the write replaces it.
  write_bytes(dir / "old.json", "old");
  EXPECT_EQ(output_file_problem((dir / "old.json").string()), std::nullopt);
}

TEST(OutputFileProblem, ADirectoryAFileAsParentAndAnUncreatableParentAreProblems) {
  const auto dir = fresh_scratch_dir("output_bad");
  EXPECT_EQ(output_file_problem(dir.string()), "is a directory");
  write_bytes(dir / "plain", "x");
  const auto under_file = output_file_problem((dir / "plain" / "r.json").string());
  ASSERT_TRUE(under_file.has_value());
  EXPECT_NE(under_file->find("Not a directory"), std::string::npos) << *under_file;
  // procfs refuses new entries, for root too (unlike permission bits).
  EXPECT_TRUE(output_file_problem("/proc/tipbench-no-such-dir/r.json").has_value());
  EXPECT_TRUE(output_file_problem("/proc/tipbench-r.json").has_value());
  EXPECT_TRUE(output_file_problem("").has_value());
}

TEST(OutputDirProblem, CreatesTheDirectoryOrSaysWhyNot) {
  const auto dir = fresh_scratch_dir("output_dir");
  EXPECT_EQ(output_dir_problem((dir / "new").string()), std::nullopt);
  EXPECT_EQ(list_dir(dir / "new"), std::vector<std::string>{});
  write_bytes(dir / "plain", "x");
  EXPECT_TRUE(output_dir_problem((dir / "plain").string()).has_value());
  EXPECT_TRUE(output_dir_problem("/proc/tipbench-no-such-dir").has_value());
}

}  // namespace
