// `tipbench history ingest|runs` as a user runs it: the real binary in a child process; exit
// codes and messages as docs/cli.md says; a bad file in the list stores nothing.
#include "tipbench/result.h"

#include "child_process.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <fstream>

namespace {

namespace fs = std::filesystem;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::synthetic_run;

struct Outcome {
  int code;
  std::string out, err;
};

Outcome tipbench_cmd(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), TIPBENCH_BINARY);
  const auto child = tipbench::testing::run_child(args, dir / "stdout.txt", dir / "stderr.txt");
  return {child.code, child.out, child.err};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(HistoryCli, IngestsOnceListsAndRefusesBadInputWithExitTwo) {
  const auto dir = fresh_scratch_dir("history_cli");
  const auto a = (dir / "a.json").string(), b = (dir / "b.json").string();
  tipbench::write_result_atomically(synthetic_run({.seed = 1}), a);
  tipbench::write_result_atomically(synthetic_run({.seed = 2}), b);
  const auto store = (dir / "store" / "history.db").string();  // its folder is made

  const auto first = tipbench_cmd(dir, {"history", "--store", store, "ingest", a});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(has(first.out, "stored as run 1")) << first.out;
  const auto both = tipbench_cmd(dir, {"history", "--store", store, "ingest", a, b});
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_TRUE(has(both.out, "already stored (run 1")) << both.out;
  EXPECT_TRUE(has(both.out, "1 new of 2")) << both.out;
  const auto listed = tipbench_cmd(dir, {"history", "--store", store, "runs"});
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_TRUE(has(listed.out, "cpu-test-2c_torch2.11.0")) << listed.out;

  // A bad file anywhere in the list: exit 2 naming it, nothing stored.
  const auto c = (dir / "c.json").string(), broken = (dir / "broken.json").string();
  tipbench::write_result_atomically(synthetic_run({.seed = 3}), c);
  std::ofstream(broken) << "{ not json";
  const auto refused = tipbench_cmd(dir, {"history", "--store", store, "ingest", c, broken});
  EXPECT_EQ(refused.code, 2);
  EXPECT_TRUE(has(refused.err, "broken.json")) << refused.err;
  EXPECT_TRUE(has(refused.err, "nothing was ingested")) << refused.err;
  EXPECT_FALSE(has(tipbench_cmd(dir, {"history", "--store", store, "runs"}).out, "  3  "));

  // A store that is not one; a missing one to list.
  const auto notes = (dir / "notes.txt").string();
  std::ofstream(notes) << "notes\n";
  const auto foreign = tipbench_cmd(dir, {"history", "--store", notes, "ingest", a});
  EXPECT_EQ(foreign.code, 2);
  EXPECT_TRUE(has(foreign.err, "not a tipbench history store")) << foreign.err;
  EXPECT_EQ(std::count(foreign.err.begin(), foreign.err.end(), '\n'), 1) << foreign.err;
  const auto missing = tipbench_cmd(dir, {"history", "--store", (dir / "none.db").string(), "runs"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_FALSE(fs::exists(dir / "none.db"));
}

}  // namespace
