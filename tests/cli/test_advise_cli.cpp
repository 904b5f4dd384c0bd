// `tipbench advise` and the recipe suite end to end with the real binary on a CPU: advice from a
// quick run of every suite writes its ranked advice, the recipe's measurement, report.html and a
// recipe.py that runs in the project's Python; a recipe run has its leave-one-out arms and their
// worth; bad input is one line and exit 2.
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "every_suite_run.h"
#include "scratch_dir.h"
#include "test_paths.h"
#include "text_match.h"
#include "tipbench_cmd.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::tipbench_cmd;

// From the shared quick run of every suite (every_suite_run.h, the fixture CliBinary's test makes):
// advise's own measuring of the tips alone is ModelFileCli.AdviseRanksTheTipsOnTheFilesModel's.
TEST(AdviseCli, QuickCpuAdviceRanksMeasuresTheRecipeAndWritesRunnableCode) {
  const auto& run = tipbench::testing::every_suite_run();
  ASSERT_TRUE(run.error.empty()) << run.error;
  const auto dir = fresh_scratch_dir("advise_quick");
  const auto out = dir / "advice";
  // 3 blocks, not --quick's 6: the flow is what is tested, and CI's time is short.
  const auto o = tipbench_cmd(dir, {"advise", "--from", run.result.string(), "--quick", "--blocks", "3", "--model",
                                    "small_cnn", "--out", out.string()});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "## The tips, ranked")) << o.out;
  const auto advice = nlohmann::json::parse(read_bytes(out / "advice.json"));
  EXPECT_EQ(advice.at("model"), "small_cnn");
  EXPECT_EQ(advice.at("device"), "cpu");
  EXPECT_GE(advice.at("ranked").size(), 10u);
  // Quick runs are smoke: the advice says so first, with the runs' conditions of measurement.
  EXPECT_TRUE(contains(advice.at("not_to_keep").dump(), "the single-tip run is --quick")) << advice.dump();
  EXPECT_GE(advice.at("conditions").size(), 1u);
  EXPECT_TRUE(contains(read_bytes(out / "advice.md"), "> **Not advice to keep:**"));
  std::size_t in_recipe = 0;
  for (const auto& tip : advice.at("ranked")) {
    if (!tip.at("in_recipe").get<bool>()) continue;
    ++in_recipe;  // only a tip that was faster alone joins the recipe
    EXPECT_EQ(tip.at("throughput").at("verdict"), "faster") << tip.dump();
  }
  const auto& recipe = advice.at("recipe");
  EXPECT_EQ(recipe.at("tips").size(), in_recipe);
  if (in_recipe > 0) {  // which tips win on this machine is its own answer; the flow is what is tested
    EXPECT_TRUE(fs::exists(out / "recipe.json"));
    EXPECT_TRUE(!recipe.at("combined").is_null() || !recipe.at("not_measured").get<std::string>().empty());
    EXPECT_EQ(recipe.at("worth").size(), in_recipe);
  }
  EXPECT_TRUE(contains(read_bytes(out / "report.html"), "Advice: small_cnn on cpu"));
  const auto py = tipbench::testing::run_child({TIPBENCH_PYTHON, (out / "recipe.py").string(), "--steps", "2"},
                                               dir / "py.out", dir / "py.err");
  EXPECT_EQ(py.code, 0) << py.err;
  EXPECT_TRUE(contains(py.out, "recipe ran 2 steps on cpu")) << py.out;
}

TEST(AdviseCli, ARecipeRunHasItsLeaveOneOutArmsAndTheirWorth) {
  const auto dir = fresh_scratch_dir("advise_recipe_run");
  const auto result = dir / "recipe.json";
  const auto o = tipbench_cmd(dir, {"run", "--suite", "recipe", "--recipe", "channels_last:nhwc,optimizer:foreach",
                                    "--quick", "--blocks", "3", "--out", result.string()});
  ASSERT_EQ(o.code, 0) << o.err;
  const auto r = tipbench::read_result(result.string());
  ASSERT_EQ(r.suites.size(), 1u);
  const auto& c = r.suites[0].cases.at(0);
  ASSERT_EQ(c.arms.size(), 4u);
  for (const auto& arm : c.arms) EXPECT_EQ(arm.status, tipbench::ArmStatus::ok) << arm.arm << ": " << arm.reason;
  EXPECT_EQ(c.arms[1].info.at("ingredients").size(), 2u);
  std::size_t worth_notes = 0;
  for (const auto& note : r.suites[0].notes) worth_notes += contains(note, "inside the recipe") ? 1 : 0;
  EXPECT_EQ(worth_notes, 2u);
  // A recipe run holds no single-tip case to rank; results of two devices are not one machine's.
  const auto from = tipbench_cmd(dir, {"advise", "--from", result.string(), "--out", (dir / "from").string()});
  EXPECT_EQ(from.code, tipbench::exit_code::usage) << from.err;
  EXPECT_TRUE(contains(from.err, "hold no tip measured")) << from.err;
  EXPECT_FALSE(fs::exists(dir / "from")) << "refused before anything is made";
  auto other = nlohmann::json::parse(read_bytes(result));
  other["context"]["device"] = "cuda:0";
  tipbench::testing::write_bytes(dir / "other.json", other.dump());
  const auto two = tipbench_cmd(dir, {"advise", "--from", result.string(), "--from", (dir / "other.json").string(),
                                      "--out", (dir / "two").string()});
  EXPECT_EQ(two.code, tipbench::exit_code::usage) << two.err;
  EXPECT_TRUE(contains(two.err, "give one machine's results")) << two.err;
  EXPECT_FALSE(fs::exists(dir / "two")) << "refused before anything is made";
}

TEST(AdviseCli, BadInputIsOneLineAndExit2) {
  const auto dir = fresh_scratch_dir("advise_bad_input");
  const std::vector<std::vector<std::string>> bad{
      {"advise", "--exclude", "speed", "--out", (dir / "a").string()},
      {"advise", "--model", "small_cnn", "--model-file", TIPBENCH_BINARY, "--out", (dir / "b").string()},
      {"advise", "--from", (dir / "missing.json").string()},
      {"advise", "--model", "no_such_model"},
      {"advise", "--from", (dir / "missing.json").string(), "--out", "/proc/self/no/advise"},
      {"advise", "--from", TIPBENCH_BINARY, "--out", (dir / "c").string()},
      {"run", "--suite", "recipe", "--recipe", "bogus:x", "--quick", "--out", (dir / "r.json").string()},
      {"run", "--suite", "recipe", "--recipe", "", "--quick", "--out", (dir / "r.json").string()},
      {"run", "--suite", "recipe", "--recipe", "determinism:deterministic,cudnn_benchmark:on", "--quick", "--out",
       (dir / "r.json").string()}};
  for (const auto& args : bad) {
    const auto o = tipbench_cmd(dir, args);
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << args.back() << ": " << o.err;
    EXPECT_TRUE(contains(o.err, "error: ")) << o.err;
    EXPECT_FALSE(contains(o.err, "terminate")) << o.err;
    if (args.front() == "run") {
      EXPECT_FALSE(contains(o.err, "suite(s) on")) << "refused before the run starts: " << o.err;
    }
  }
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  EXPECT_FALSE(fs::exists(dir / "c")) << "a --from that is no result makes no folder";
}

}  // namespace
