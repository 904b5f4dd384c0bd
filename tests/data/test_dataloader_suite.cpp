// The dataloader suite end to end through the CLI, in-process, on a tiny on-disk dataset:
// `tipbench data make`, a quick run with its grid and pipeline ladder, metrics, skipped pinned
// arms and notes, the loader-only ceiling of every arm, a missing dataset and the corrupt-file
// policies in every arm.
#include "tipbench/data/dataset.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/result.h"
#include "tipbench/measure/trial.h"

#include "cli_capture.h"
#include "scratch_dir.h"
#include "text_match.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <set>

namespace {

namespace data = tipbench::data;
using tipbench::ArmStatus;
using tipbench::testing::cli;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::write_bytes;

// A dataset small enough for a test: 48 images of 128x96, 4 classes.
std::string tiny_dataset(const std::string& name) {
  const auto dir = fresh_scratch_dir(name) / "data";
  const auto o = cli({"data", "make", "--out", dir.string(), "--images", "48", "--size", "128x96", "--classes", "4"});
  EXPECT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  return dir.string();
}

std::vector<std::string> quick_run(const std::string& data_dir, const std::string& out, int blocks = 3) {
  return {"run",          "--suite", "dataloader", "--device", "cpu",   "--quick", "--blocks", std::to_string(blocks),
          "--batch-size", "8",       "--data",     data_dir,   "--out", out};
}

TEST(DataMake, MakesReusesAndRefusesBadInput) {
  const auto dir = fresh_scratch_dir("suite_make") / "d";
  auto o = cli({"data", "make", "--out", dir.string(), "--images", "12", "--size", "64x48", "--classes", "3"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.out, "made " + dir.string())) << o.out;
  const auto m = data::read_manifest(dir.string());
  EXPECT_EQ(m.spec.images, 12);
  EXPECT_EQ(m.spec.width, 64);
  EXPECT_EQ(m.spec.height, 48);
  o = cli({"data", "make", "--out", dir.string(), "--images", "12", "--size", "64x48", "--classes", "3"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.out, "reused")) << o.out;
  ::unlink((dir / m.files[4].path).c_str());
  o = cli({"data", "make", "--out", dir.string(), "--images", "12", "--size", "64x48", "--classes", "3"});
  EXPECT_TRUE(contains(o.out, "completed")) << o.out;
  EXPECT_TRUE(contains(o.out, "1 of 12 files missing")) << o.out;

  EXPECT_EQ(cli({"data", "make", "--out", dir.string(), "--images", "13", "--size", "64x48", "--classes", "3"}).code,
            tipbench::exit_code::usage);  // another spec in the same directory
  o = cli({"data", "make", "--out", dir.string(), "--size", "64by48"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "WIDTHxHEIGHT")) << o.err;
  EXPECT_EQ(cli({"data", "make", "--images", "3"}).code, tipbench::exit_code::usage);  // --out is required
  EXPECT_EQ(cli({"data", "make", "--out", dir.string(), "--size", "8x8"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"data"}).code, tipbench::exit_code::usage);
}

TEST(DataloaderSuite, MissingDatasetIsAnInputErrorThatNamesTheFix) {
  const auto dir = fresh_scratch_dir("suite_missing");
  const auto out = (dir / "r.json").string();
  auto o = cli(quick_run((dir / "nope").string(), out));
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "tipbench data make --out " + (dir / "nope").string())) << o.err;
  // A directory without a manifest: not a dataset.
  o = cli(quick_run(dir.string(), out));
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "manifest.json")) << o.err;
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{}) << "nothing is written on an input error";
  EXPECT_EQ(cli({"run", "--suite", "dataloader", "--corrupt-policy", "ignore"}).code, tipbench::exit_code::usage);
}

TEST(DataloaderSuite, QuickRunOnTheCpuMeasuresTheWorkersGrid) {
  const std::string data_dir = tiny_dataset("suite_quick");
  const auto out = (fresh_scratch_dir("suite_quick_out") / "r.json").string();
  const auto o = cli(quick_run(data_dir, out));
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err << o.out;
  const auto r = tipbench::read_result(out);
  ASSERT_EQ(r.suites.size(), 1u);
  const auto& suite = r.suites[0];
  ASSERT_EQ(suite.cases.size(), 2u);  // the workers grid and the pipeline ladder
  const auto& c = suite.cases[0];
  EXPECT_EQ(c.name, "dataloader/mode:train/model:small_cnn/batch:8/image_size:32");
  ASSERT_GE(c.arms.size(), 4u);
  EXPECT_EQ(c.arms[0].arm, "w0");
  EXPECT_TRUE(c.arms[0].baseline);
  std::set<std::string> workers_run;
  for (const auto& arm : c.arms) {
    SCOPED_TRACE(arm.name);
    const bool pin = arm.levels.at(1) == std::pair<std::string, std::string>{"pin_memory", "true"};
    EXPECT_EQ(arm.levels.at(0).first, "workers");
    if (pin) {  // no GPU in this run: skipped with the reason, the workers axis runs
      EXPECT_EQ(arm.status, ArmStatus::skipped);
      EXPECT_TRUE(contains(arm.reason, "CUDA")) << arm.reason;
      continue;
    }
    ASSERT_EQ(arm.status, ArmStatus::ok) << arm.reason;
    workers_run.insert(arm.levels.at(0).second);
    ASSERT_EQ(arm.trials.size(), 3u);
    for (const auto& t : arm.trials) {
      EXPECT_GE(t.metrics.at("data_wait_fraction"), 0.0);
      EXPECT_LE(t.metrics.at("data_wait_fraction"), 1.0);
      EXPECT_GT(t.metrics.at("cpu_busy_cores"), 0.0);
      EXPECT_GT(t.metrics.at("host_rss_bytes"), 0.0);
      EXPECT_EQ(t.metrics.at("skipped_files"), 0.0);
      EXPECT_FALSE(t.metrics.count("h2d_copy_ms")) << "no copy on the CPU";
    }
    EXPECT_EQ(arm.info.at("mode"), "train");
    EXPECT_EQ(arm.info.at("workers").get<int>(), std::stoi(arm.levels.at(0).second));
    EXPECT_GE(arm.info.at("torch_threads").get<int>(), 1);
    EXPECT_EQ(arm.info.at("dataset").at("images").get<int>(), 48);
    EXPECT_EQ(arm.info.at("h2d_copy"), "none");
    EXPECT_TRUE(arm.metrics.count("data_wait_fraction"));
  }
  EXPECT_TRUE(workers_run.count("0") && workers_run.count("1")) << "the workers axis runs";

  const auto& ladder = suite.cases[1];
  EXPECT_TRUE(contains(ladder.name, "/pipeline:ladder/workers:")) << ladder.name;
  EXPECT_TRUE(contains(ladder.name, "/pin_memory:false")) << "pinned only on CUDA: " << ladder.name;
  ASSERT_EQ(ladder.arms.size(), 3u) << "--quick: no decoded cache";
  for (const auto& arm : ladder.arms) {
    SCOPED_TRACE(arm.name);
    if (arm.arm == "nvjpeg") {  // decodes on a GPU: skipped here with the reason
      EXPECT_EQ(arm.status, ArmStatus::skipped);
      EXPECT_TRUE(contains(arm.reason, "nvJPEG")) << arm.reason;
      continue;
    }
    ASSERT_EQ(arm.status, ArmStatus::ok) << arm.reason;
    EXPECT_EQ(arm.info.at("decode"), "libjpeg-turbo on the workers");
    const bool uint8 = arm.arm != "host_float";
    EXPECT_EQ(contains(arm.info.at("pixels").get<std::string>(), "uint8"), uint8);
    EXPECT_EQ(arm.info.at("decoded_cache").get<bool>(), arm.arm == "uint8_cache");
    EXPECT_EQ(arm.info.at("batch_bytes").get<std::int64_t>(), 8 * (3 * 32 * 32 * (uint8 ? 1 : 4) + 8));
  }
  EXPECT_EQ(ladder.arms[0].arm, "host_float");
  EXPECT_TRUE(ladder.arms[0].baseline);
  EXPECT_FALSE(c.comparisons.empty());
  ASSERT_FALSE(suite.notes.empty());
  EXPECT_TRUE(contains(suite.notes[0], "waited for data")) << suite.notes[0];
  EXPECT_TRUE(contains(o.out, "waited for data")) << "notes are printed with the table";
}

TEST(DataloaderSuite, LoaderOnlyComparesTheCeilingWithTheModelsConsumption) {
  const std::string data_dir = tiny_dataset("suite_loader_only");
  const auto out = (fresh_scratch_dir("suite_loader_only_out") / "r.json").string();
  auto args = quick_run(data_dir, out);
  args.push_back("--loader-only");
  const auto o = cli(args);
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err << o.out;
  const auto r = tipbench::read_result(out);
  const auto& c = r.suites.at(0).cases.at(0);
  EXPECT_EQ(c.name, "dataloader/mode:loader_only/model:small_cnn/batch:8/image_size:32");
  const auto& model = c.arms.back();
  EXPECT_EQ(model.arm, "synthetic");
  EXPECT_EQ(model.status, ArmStatus::ok) << model.reason;
  EXPECT_EQ(c.arms.front().info.at("mode"), "loader_only");
  EXPECT_FALSE(c.arms.front().info.contains("model"));
  const auto& notes = r.suites[0].notes;
  ASSERT_GE(notes.size(), 2u);
  EXPECT_TRUE(contains(notes[0], "loader ceiling")) << notes[0];
  int verdicts = 0, conclusions = 0;
  for (const auto& n : notes) {
    verdicts += contains(n, "input-bound") || contains(n, "keeps up") || contains(n, "about even");
    conclusions += contains(n, "the first arm whose ceiling exceeds") || contains(n, "no arm's ceiling exceeds");
  }
  EXPECT_GE(verdicts, 2 + 2) << "one verdict per runnable grid cell and ladder rung";
  EXPECT_EQ(conclusions, 2) << "one per case, grid and ladder";
  const auto& ladder = r.suites[0].cases.at(1);
  EXPECT_EQ(ladder.arms.back().arm, "synthetic");
  EXPECT_EQ(ladder.arms.front().info.at("mode"), "loader_only");
}

TEST(DataloaderSuite, CorruptFilesFailTheRunOrMakeTheArmsInvalid) {
  const std::string data_dir = tiny_dataset("suite_corrupt");
  const auto manifest = data::read_manifest(data_dir);
  // Every fourth file: nearly every batch of 8 (of 48 files) holds one, so the timed steps meet them.
  std::set<std::string> bad;
  for (std::size_t i = 0; i < manifest.files.size(); i += 4) {
    bad.insert(manifest.files[i].path);
    write_bytes(data_dir + "/" + manifest.files[i].path, "this is not a JPEG file");
  }
  const auto out_dir = fresh_scratch_dir("suite_corrupt_out");

  auto args = quick_run(data_dir, (out_dir / "fail.json").string());
  args.insert(args.end(), {"--corrupt-policy", "fail"});
  auto o = cli(args);
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.out;
  EXPECT_TRUE(contains(o.err, "--corrupt-policy fail")) << o.err;
  EXPECT_TRUE(contains(o.err, "class_")) << "names the file: " << o.err;
  EXPECT_EQ(list_dir(out_dir), std::vector<std::string>{});

  // skip: a quarter of the files skipped is far above the 1% a valid trial allows. The arms are
  // invalid (kept with the reason, never compared) and the run says so with exit 1. Two blocks
  // are enough; an invalid arm is not run again anyway.
  o = cli(quick_run(data_dir, (out_dir / "skip.json").string(), /*blocks=*/2));
  ASSERT_EQ(o.code, tipbench::exit_code::failed) << o.err;
  const auto r = tipbench::read_result((out_dir / "skip.json").string());
  // Every arm of the grid and of the ladder (uint8, decoded cache) meets the bad files the same way.
  ASSERT_EQ(r.suites.at(0).cases.size(), 2u);
  for (const auto& each : r.suites.at(0).cases) {
    for (const auto& arm : each.arms) {
      if (arm.status == ArmStatus::skipped) continue;  // pinned arms on a CPU
      SCOPED_TRACE(arm.name);
      EXPECT_EQ(arm.status, ArmStatus::invalid);
      EXPECT_TRUE(contains(arm.reason, "block 0: the loader skipped")) << arm.reason;
      EXPECT_TRUE(contains(arm.reason, "more than the 1%")) << arm.reason;
      EXPECT_EQ(arm.trials.size(), 1u) << "kept for inspection";
    }
    EXPECT_TRUE(each.comparisons.empty());
  }
  const auto& c = r.suites.at(0).cases.at(0);
  const auto& w0 = c.arms.at(0);
  ASSERT_TRUE(w0.info.contains("skipped_files"));
  for (const auto& f : w0.info.at("skipped_files")) {
    EXPECT_TRUE(bad.count(f.at("path").get<std::string>())) << f.dump();
    EXPECT_TRUE(contains(f.at("reason").get<std::string>(), "cannot decode")) << f.dump();
  }
  EXPECT_GT(w0.trials.at(0).metrics.at("skipped_files"), 0) << "the timed steps met bad files";
  EXPECT_TRUE(contains(o.out, "invalid")) << o.out;
}

// One corrupt file in 400 stays under the 1% limit: the timed steps take at least 5 batches of
// 64 (320 files) and meet it at most once per epoch of 400 plus once at an epoch boundary, so at
// most 1/400 + 1/320 = 0.56% of their files. It is skipped, counted and noted, and the arms are
// measured as usual.
TEST(DataloaderSuite, ARareCorruptFileIsSkippedAndCounted) {
  const auto dir = fresh_scratch_dir("suite_rare_corrupt") / "data";
  auto o = cli({"data", "make", "--out", dir.string(), "--images", "400", "--size", "64x48", "--classes", "4"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto manifest = data::read_manifest(dir.string());
  write_bytes(dir.string() + "/" + manifest.files[7].path, "this is not a JPEG file");
  const auto out = (fresh_scratch_dir("suite_rare_corrupt_out") / "r.json").string();
  auto args = quick_run(dir.string(), out, /*blocks=*/2);
  args[std::find(args.begin(), args.end(), "--batch-size") - args.begin() + 1] = "64";
  o = cli(args);
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  const auto& w0 = r.suites.at(0).cases.at(0).arms.at(0);
  ASSERT_EQ(w0.status, ArmStatus::ok) << w0.reason;
  ASSERT_TRUE(w0.info.contains("skipped_files"));
  EXPECT_EQ(w0.info.at("skipped_files").at(0).at("path"), manifest.files[7].path);
  EXPECT_TRUE(contains(o.out, "skipped as corrupt or missing")) << "a note says so";
}

// The full ladder's third rung, the decoded cache, as one short trial: it warms up for a whole
// epoch (48 images / 8 + the batches made ahead) and then reads the cache.
TEST(DataloaderSuite, TheFullLaddersCacheRungWarmsUpForAnEpochThenReadsRam) {
  const std::string data_dir = tiny_dataset("suite_ladder_cache");
  const tipbench::Suite* suite = tipbench::find_suite("dataloader");
  ASSERT_NE(suite, nullptr);
  tipbench::SuiteContext context;
  context.batch_size = 8;
  context.options = {{"data", data_dir}};
  const auto cases = suite->cases(context);
  ASSERT_EQ(cases.size(), 2u);
  const auto& ladder = cases[1];
  ASSERT_EQ(ladder.arms.size(), 4u);
  ASSERT_EQ(ladder.arms[2].name, "uint8_cache");
  ASSERT_EQ(ladder.arms[3].name, "nvjpeg");
  tipbench::MeasureSettings short_trial = tipbench::quick_settings();
  short_trial.warmup_max_steps = 2;  // a fixed warm-up of the workload overrides it
  short_trial.trial_min_steps = 3;
  short_trial.trial_min_time_s = 0.01;
  const auto t = tipbench::run_trial(*suite, context, ladder, ladder.arms[2], short_trial, 0, 0);
  EXPECT_GE(t.trial.warmup_steps, 6) << "a whole epoch first";
  EXPECT_EQ(t.trial.metrics.at("decoded_cache_bytes"), 48.0 * 128 * 96 * 3) << "every image decoded once, held";
  EXPECT_TRUE(t.info.at("decoded_cache").get<bool>());
}

}  // namespace

namespace {

// The ladder's GPU-decode rung as one short trial on a GPU: small_cnn trains from batches nvJPEG
// decoded, cropped and normalised on the device; the trial says which backend decoded and how
// long a batch's decode took on the device.
TEST(DataloaderSuite_CUDA, TheNvjpegRungTrainsFromBatchesDecodedOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device here";
  const std::string data_dir = tiny_dataset("suite_ladder_nvjpeg");
  const tipbench::Suite* suite = tipbench::find_suite("dataloader");
  ASSERT_NE(suite, nullptr);
  tipbench::SuiteContext context;
  context.device = c10::Device(c10::kCUDA, 0);
  context.models = {"small_cnn"};
  context.batch_size = 8;
  context.options = {{"data", data_dir}};
  const auto cases = suite->cases(context);
  ASSERT_EQ(cases.size(), 2u);
  const auto& ladder = cases[1];
  const auto rung =
      std::find_if(ladder.arms.begin(), ladder.arms.end(), [](const auto& a) { return a.name == "nvjpeg"; });
  ASSERT_NE(rung, ladder.arms.end());
  if (auto why = suite->skip_reason(context, ladder, *rung)) GTEST_SKIP() << *why;
  tipbench::MeasureSettings short_trial = tipbench::quick_settings();
  short_trial.warmup_max_steps = 2;
  short_trial.trial_min_steps = 3;
  short_trial.trial_min_time_s = 0.01;
  const auto t = tipbench::run_trial(*suite, context, ladder, *rung, short_trial, 0, 0);
  EXPECT_TRUE(contains(t.info.at("decode").get<std::string>(), "nvJPEG")) << t.info.dump();
  EXPECT_TRUE(contains(t.info.at("h2d_copy").get<std::string>(), "side stream")) << t.info.dump();
  EXPECT_GT(t.trial.metrics.at("device_decode_ms"), 0.0);
  EXPECT_EQ(t.trial.metrics.at("skipped_files"), 0.0);
  EXPECT_FALSE(t.trial.metrics.count("h2d_copy_ms"));
}

}  // namespace
