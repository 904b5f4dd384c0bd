// The child runs (tipbench/processes/child_runs.h) without the CLI: a child that cannot start, exits badly or
// leaves no result is a ChildRunError naming its log and its last error line; a case's selection
// flags are dropped and rebuilt from a result.
#include "tipbench/processes/child_runs.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

namespace {

namespace fs = std::filesystem;
using tipbench::testing::fresh_scratch_dir;

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const tipbench::ChildRunError& e) {
    return e.what();
  }
  return "";
}

TEST(ChildRuns, AChildThatGivesNoResultIsAChildRunErrorNamingItsLog) {
  const auto dir = fresh_scratch_dir("child_runs");
  const std::string log = (dir / "logs" / "child.log").string();  // its folder is made
  const auto child = (dir / "child.sh").string();                 // a `run` that refuses, as tipbench words it
  std::ofstream(child) << "#!/bin/sh\necho starting\necho 'error: --suite nope: no such suite'\nexit 3\n";
  fs::permissions(child, fs::perms::owner_all);
  const auto failed = error_of([&] { tipbench::run_once(child, {}, (dir / "r.json").string(), log); });
  EXPECT_NE(failed.find("exited with 3; its log: " + log + ": --suite nope: no such suite"), std::string::npos)
      << failed;
  // `true run ...` exits 0 and writes nothing: the child's output is the fault, not the user's input.
  const auto empty = error_of([&] { tipbench::run_once("/bin/true", {}, (dir / "r.json").string(), log); });
  EXPECT_NE(empty.find("left no readable result"), std::string::npos) << empty;
  const auto missing = error_of([&] { tipbench::run_once((dir / "absent").string(), {}, "r.json", log); });
  EXPECT_NE(missing.find("could not start"), std::string::npos) << missing;
  EXPECT_EQ(tipbench::spawn_logged({"/bin/sh", "-c", "echo hello; exit 3"}, log), 3);
  std::ifstream in(log);
  std::string said;
  std::getline(in, said);
  EXPECT_EQ(said, "hello");
}

TEST(ChildRuns, ACaseIsSelectedFromItsParamsAndTheOldSelectionDropped) {
  EXPECT_EQ(tipbench::strip_selection({"--quick", "--suite", "amp", "--model=resnet50", "--out", "x.json", "--device",
                                       "cpu", "--time-budget", "15m"}),
            (std::vector<std::string>{"--quick", "--device", "cpu"}));
  tipbench::Result r;
  tipbench::SuiteResult s;
  s.name = "amp";
  tipbench::CaseResult c;
  c.name = "amp/model:small_cnn/batch:32";
  c.params = {{"model", "small_cnn"}, {"batch", "32"}};
  tipbench::CaseResult largest;
  largest.name = "amp/model:small_cnn/batch:largest";
  largest.params = {{"model", "small_cnn"}, {"batch", "largest"}};
  s.cases = {c, largest};
  r.suites = {s};
  EXPECT_EQ(tipbench::select_case(r, "amp", c.name),
            (std::vector<std::string>{"--suite", "amp", "--model", "small_cnn", "--batch-size", "32"}));
  EXPECT_EQ(tipbench::select_case(r, "amp", largest.name),  // "largest" is no batch size to pass on
            (std::vector<std::string>{"--suite", "amp", "--model", "small_cnn"}));
}

}  // namespace
