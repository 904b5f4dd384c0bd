// `run --model-file` and `gate --base-model-file/--head-model-file` end to end with the real
// binary on model files export_model.py wrote (tests/support/model_files.h): a run records the
// file's identity, trains it in process and in fresh-process trials, and says why a tip that edits
// the model cannot run; every bad file ends in one line and exit 2 with nothing written; the gate
// pairs two versions of a model and refuses what cannot pair.
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/recorded_options.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "model_files.h"
#include "running_child.h"
#include "scratch_dir.h"
#include "test_paths.h"
#include "text_match.h"
#include "tipbench_cmd.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::model_files;
using tipbench::testing::tipbench_cmd;

class ModelFileCli : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(model_files().error.empty()) << model_files().error; }
  static std::string file(const std::string& name) { return model_files().path(name); }
};

TEST_F(ModelFileCli, RunTrainsTheFilesModelAndRecordsItsIdentity) {
  const auto dir = fresh_scratch_dir("model_file_cli_run");
  const std::string out = (dir / "run.json").string();
  // allocator runs every trial in a fresh process: the child loads the file too.
  const auto o = tipbench_cmd(dir, {"run", "--model-file", file("tiny.pt"), "--suite", "zero_grad", "--suite",
                                    "conv_bias", "--suite", "allocator", "--quick", "--blocks", "2", "--out", out});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  const auto& mf = r.context.model_file;
  ASSERT_TRUE(mf.is_object());
  EXPECT_EQ(mf.at("name"), "tiny_net");
  EXPECT_EQ(mf.at("sha256").get<std::string>().size(), 64u);
  EXPECT_EQ(mf.at("metadata").at("format"), "tipbench model file 1");
  EXPECT_EQ(mf.at("executor").at("graph_optimize"), "true");
  EXPECT_GE(r.context.settings.warmup_min_steps, tipbench::kModelFileWarmupMinSteps);
  int ok = 0;
  for (const auto& suite : r.suites) {
    for (const auto& c : suite.cases) {
      EXPECT_TRUE(contains(c.name, "model:tiny_net")) << c.name;
      for (const auto& arm : c.arms) {
        if (suite.name == "conv_bias") {
          EXPECT_EQ(arm.status, tipbench::ArmStatus::skipped) << arm.name;
          EXPECT_TRUE(contains(arm.reason, "is a model file, run as written")) << arm.reason;
        } else {
          EXPECT_EQ(arm.status, tipbench::ArmStatus::ok) << arm.name << ": " << arm.reason;
          ok += arm.status == tipbench::ArmStatus::ok;
        }
      }
    }
  }
  EXPECT_GE(ok, 4) << "zero_grad's two arms and the allocator's glibc and jemalloc";
}

// advise ranks the tips on the file's model: the tips that edit a model's code say why not, and
// whatever wins is measured together on the same file.
TEST_F(ModelFileCli, AdviseRanksTheTipsOnTheFilesModel) {
  const auto dir = fresh_scratch_dir("model_file_cli_advise");
  const auto out = dir / "advice";
  const auto o =
      tipbench_cmd(dir, {"advise", "--model-file", file("tiny.pt"), "--quick", "--blocks", "3", "--out", out.string()});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto advice = nlohmann::json::parse(tipbench::testing::read_bytes(out / "advice.json"));
  EXPECT_EQ(advice.at("model"), "tiny_net");
  bool conv_bias_seen = false;
  for (const auto& tip : advice.at("ranked")) {
    if (tip.at("tip") != "conv_bias") continue;
    conv_bias_seen = true;
    EXPECT_TRUE(contains(tip.at("not_measured").get<std::string>(), "model file")) << tip.dump();
  }
  EXPECT_TRUE(conv_bias_seen);
  if (!advice.at("recipe").at("tips").empty()) {
    const auto r = tipbench::read_result((out / "recipe.json").string());
    EXPECT_EQ(r.context.model_file.at("name"), "tiny_net");
  }
}

// A .pt2 runs like a TorchScript file, in the run's process and in a fresh trial process; the
// result names its format and runner.
TEST_F(ModelFileCli, RunTrainsATorchExportArchive) {
  const auto dir = fresh_scratch_dir("model_file_cli_pt2");
  const std::string out = (dir / "run.json").string();
  const auto o = tipbench_cmd(dir, {"run", "--model-file", file("tiny.pt2"), "--suite", "zero_grad", "--suite",
                                    "allocator", "--quick", "--blocks", "2", "--out", out});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  const auto& mf = r.context.model_file;
  EXPECT_EQ(mf.at("name"), "tiny_pt2");
  EXPECT_EQ(mf.at("format"), "pt2");
  EXPECT_EQ(mf.at("how"), "export");
  EXPECT_TRUE(contains(mf.at("executor").at("runner").get<std::string>(), "c10::Dispatcher")) << mf.dump();
  int ok = 0;
  for (const auto& suite : r.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) {
        EXPECT_EQ(arm.status, tipbench::ArmStatus::ok) << c.name << " " << arm.name << ": " << arm.reason;
        ok += arm.status == tipbench::ArmStatus::ok;
      }
    }
  }
  EXPECT_GE(ok, 4) << "zero_grad's two arms and the allocator's glibc and jemalloc";
}

TEST_F(ModelFileCli, BadFilesAndFlagsEndInOneLineAndExit2WithNothingWritten) {
  const auto dir = fresh_scratch_dir("model_file_cli_bad");
  const std::string out = (dir / "never.json").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--model-file", file("not_torchscript.pt")}, "not a TorchScript model"},
      {{"--model-file", file("newer_torch.pt")}, "maximum supported version"},
      {{"--model-file", file("custom_op.pt")}, "Unknown builtin op"},
      {{"--model-file", file("traced.pt")}, "--allow-trace"},
      {{"--model-file", file("no_metadata.pt")}, "--model-input"},
      {{"--model-file", file("wrong_width.pt")}, "want logits"},
      {{"--model-file", file("int_logits.pt")}, "floating point"},
      {{"--model-file", file("grayscale.pt")}, "3-channel"},
      {{"--model-file", file("tiny.pt"), "--model", "small_cnn"}, "not both"},
      {{"--model-file", file("no_metadata.pt"), "--model-input", "3,32"}, "is not C,H,W"},
      {{"--model-file", (dir / "missing.pt").string()}, "missing.pt"},
      {{"--allow-trace"}, "applies to --model-file"},
      {{"--jit-optimize", "off"}, "applies to --model-file"},
      {{"--model-file", file("from_file.pt2")}, "it calls aten::from_file"},
      {{"--model-file", file("tiny.pt2"), "--allow-op", "not an op"}, "is not NAMESPACE::OP"},
      {{"--allow-op", "mylib::*"}, "applies to --model-file"},
  };
  for (const auto& [flags, reason] : cases) {
    std::vector<std::string> args{"run", "--suite", "zero_grad", "--quick", "--out", out};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto o = tipbench_cmd(dir, args);
    SCOPED_TRACE(flags.back());
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
    EXPECT_TRUE(contains(o.err, reason)) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_FALSE(contains(o.err, "terminate called") || contains(o.err, "frame #")) << o.err;
    EXPECT_FALSE(contains(o.err, "/pytorch/")) << "LibTorch's build folders: " << o.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out + ".partial"));
  }
  // Without metadata, the flags say the shape; the name is the file's stem.
  const auto o =
      tipbench_cmd(dir, {"run", "--suite", "zero_grad", "--quick", "--blocks", "2", "--out", out, "--model-file",
                         file("no_metadata.pt"), "--model-input", "3,32,32", "--model-classes", "10", "--dry-run"});
  EXPECT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.out, "model:no_metadata")) << o.out;
}

// An interrupted run on a model file resumes on that file only: the same bytes finish it, another
// version of the file at the same path is refused, naming both hashes.
TEST_F(ModelFileCli, ResumeFinishesOnTheSameFileAndRefusesAnotherVersion) {
  const auto dir = fresh_scratch_dir("model_file_cli_resume");
  const auto model = dir / "net.pt";
  fs::copy_file(file("tiny.pt"), model);
  const std::string out = (dir / "r.json").string();
  auto interrupt = [&](const std::string& logs) {
    fs::create_directories(dir / logs);
    tipbench::testing::RunningChild child({TIPBENCH_BINARY, "run", "--model-file", model.string(), "--suite",
                                           "zero_grad", "--suite", "sync", "--quick", "--out", out},
                                          dir / logs);
    ASSERT_TRUE(child.wait_for_file(out + ".partial", std::chrono::seconds(300))) << child.describe();
    ASSERT_EQ(::kill(child.pid(), SIGINT), 0);
    ASSERT_TRUE(child.wait(std::chrono::seconds(60))) << child.describe();
  };
  interrupt("first");
  fs::copy_file(file("tiny_v2.pt"), model, fs::copy_options::overwrite_existing);
  const auto refused = tipbench_cmd(dir, {"run", "--resume", out + ".partial"});
  EXPECT_EQ(refused.code, tipbench::exit_code::usage) << refused.err;
  EXPECT_TRUE(contains(refused.err, "model file sha256")) << refused.err;
  EXPECT_TRUE(fs::exists(out + ".partial")) << "the kept case is not lost";

  fs::copy_file(file("tiny.pt"), model, fs::copy_options::overwrite_existing);
  const auto resumed = tipbench_cmd(dir, {"run", "--resume", out + ".partial"});
  ASSERT_EQ(resumed.code, tipbench::exit_code::ok) << resumed.err;
  EXPECT_EQ(tipbench::read_result(out).suites.size(), 2u);
}

TEST_F(ModelFileCli, GatePairsTwoVersionsOfAModelAndRefusesWhatCannotPair) {
  const auto dir = fresh_scratch_dir("model_file_cli_gate");
  const auto gate = tipbench_cmd(dir, {"gate", "--base-model-file", file("tiny.pt"), "--head-model-file",
                                       file("tiny_v2.pt"), "--suite", "zero_grad", "--blocks", "3", "--out-dir",
                                       (dir / "session").string(), "--json", (dir / "gate.json").string()});
  // A verdict (PASS, FAIL or INCONCLUSIVE on a noisy machine), never a usage or internal error.
  EXPECT_TRUE(gate.code == 0 || gate.code == 1 || gate.code == 3) << gate.err;
  EXPECT_TRUE(fs::exists(dir / "gate.json"));
  const auto base = tipbench::read_result((dir / "session" / "base.json").string());
  const auto head = tipbench::read_result((dir / "session" / "head.json").string());
  EXPECT_NE(base.context.model_file.at("sha256"), head.context.model_file.at("sha256"));
  EXPECT_EQ(base.suites.at(0).cases.at(0).name, head.suites.at(0).cases.at(0).name);

  const auto names = tipbench_cmd(dir, {"gate", "--base-model-file", file("tiny.pt"), "--head-model-file",
                                        file("other_name.pt"), "--suite", "zero_grad"});
  EXPECT_EQ(names.code, tipbench::exit_code::usage) << names.err;
  EXPECT_TRUE(contains(names.err, "same --name")) << names.err;
  const auto alone = tipbench_cmd(dir, {"gate", "--base-model-file", file("tiny.pt"), "--suite", "zero_grad"});
  EXPECT_EQ(alone.code, tipbench::exit_code::usage) << alone.err;

  // A stored baseline of one model never gates a run of another (here: of the other version).
  const auto stored = tipbench_cmd(dir, {"gate", "--baseline", (dir / "session" / "base.json").string(), "--current",
                                         (dir / "session" / "head.json").string(), "--no-rerun"});
  EXPECT_EQ(stored.code, tipbench::exit_code::usage) << stored.err;
  EXPECT_TRUE(contains(stored.err, "different models never gate each other")) << stored.err;
}

}  // namespace
