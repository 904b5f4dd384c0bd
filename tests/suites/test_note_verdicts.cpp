// A suite's note that compares two arms says what the harness says for the same blocks: the ratio,
// interval, verdict and noise mark of the harness's comparison (summarize_case) of those two arms.
// One test per note that compares arms (batch_size's sweep, data_parallel's overlap, dataloader's
// loader ceiling), each with a block where a trial recorded no throughput and a block only one
// arm ran.
#include "suite_plan.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tipbench::ArmResult;
using tipbench::CaseResult;
using tipbench::Comparison;
using tipbench::testing::contains;
using tipbench::testing::suite_named;

// An ok arm with one trial per block: median `throughput`, 3% noise; `zero_block` recorded no
// throughput (the harness drops that block from the pairing), `missing_block` did not run.
ArmResult arm(const std::string& name, tipbench::Levels levels, double throughput, std::uint64_t seed,
              int zero_block = -1, int missing_block = -1) {
  ArmResult a;
  a.arm = name;
  a.levels = std::move(levels);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.03);
  for (int b = 0; b < 8; ++b) {
    if (b == missing_block) continue;
    tipbench::Trial t;
    t.block = b;
    t.samples_per_step = 8;
    t.throughput_samples_per_s = b == zero_block ? 0.0 : throughput * (1 + noise(rng));
    t.step_times_ms = {1.0};
    a.trials.push_back(t);
  }
  tipbench::summarize_arm(a);
  return a;
}

// What the harness says of `treatment` against `reference`: its own comparison, in a case where
// `reference` is the baseline.
Comparison harness_comparison(const ArmResult& treatment, ArmResult reference, const tipbench::MeasureSettings& s) {
  CaseResult c;
  reference.baseline = true;
  c.arms = {reference, treatment};
  c.arms[1].baseline = false;
  tipbench::summarize_case(c, s);
  for (const auto& k : c.comparisons) {
    if (k.metric == "throughput_samples_per_s") return k;
  }
  throw std::runtime_error("the harness made no throughput comparison");
}

std::string noisy_mark(const Comparison& k) { return k.noisy ? " [noisy]" : ""; }

std::vector<std::string> notes_of(const std::string& suite, CaseResult c, const tipbench::MeasureSettings& s) {
  tipbench::SuiteResult r;
  r.name = suite;
  r.cases.push_back(std::move(c));
  return suite_named(suite).notes(r, s);
}

std::string joined(const std::vector<std::string>& notes) {
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  return all;
}

TEST(NoteVerdicts, BatchSizeSweepJudgesEachBatchAgainstTheOneBeforeAsTheHarnessWould) {
  const tipbench::MeasureSettings s;
  CaseResult c;
  c.name = "batch_size/model:small_cnn/experiment:sweep";
  c.params = {{"model", "small_cnn"}, {"experiment", "sweep"}};
  c.arms = {arm("b16", {{"batch", "16"}}, 1000, 1), arm("b32", {{"batch", "32"}}, 1500, 2, /*zero_block=*/3),
            arm("b64", {{"batch", "64"}}, 1510, 3, -1, /*missing_block=*/5)};
  const auto note = notes_of("batch_size", c, s).at(0);
  // The note stops at the first pair that is not faster; every pair up to it is the harness's.
  for (std::size_t i = 1; i < c.arms.size(); ++i) {
    const auto k = harness_comparison(c.arms[i], c.arms[i - 1], s);
    const auto& e = k.estimate;
    if (k.verdict != tipbench::stats::Verdict::faster) {
      EXPECT_TRUE(contains(
          note, fmt::format("{} vs {}: throughput x{:.2f} [{:.2f}, {:.2f}] {}{}", k.treatment, k.baseline, e.ratio,
                            e.ci_low, e.ci_high, tipbench::stats::verdict_words(k.verdict), noisy_mark(k))))
          << note;
      EXPECT_TRUE(contains(note, "stops growing at batch " + tipbench::level(c.arms[i - 1].levels, "batch"))) << note;
      return;
    }
  }
  FAIL() << "the planted plateau (b64 ~ b32) was not found: " << note;
}

TEST(NoteVerdicts, DataParallelOverlapIsTheHarnessComparisonOfDdpOverDdpNoOverlap) {
  const tipbench::MeasureSettings s;
  CaseResult c;
  c.name = "data_parallel/model:small_cnn/batch:8/ranks:2/bucket_mb:25";
  c.params = {{"model", "small_cnn"}, {"batch", "8"}, {"ranks", "2"}, {"bucket_mb", "25"}};
  c.arms = {arm("single", {{"mode", "single"}}, 1000, 1),
            arm("ddp", {{"mode", "ddp"}, {"overlap", "true"}}, 1800, 2, /*zero_block=*/1),
            arm("ddp_no_overlap", {{"mode", "ddp"}, {"overlap", "false"}}, 1600, 3, -1, /*missing_block=*/6)};
  c.arms[0].baseline = true;
  tipbench::summarize_case(c, s);
  const auto k = harness_comparison(c.arms[1], c.arms[2], s);
  const auto& e = k.estimate;
  const auto notes = joined(notes_of("data_parallel", c, s));
  EXPECT_TRUE(contains(notes, fmt::format("changed throughput by {:+.1f}% (95% CI {:+.1f}% to {:+.1f}%, {} blocks: "
                                          "{}{})",
                                          100 * (e.ratio - 1), 100 * (e.ci_low - 1), 100 * (e.ci_high - 1), e.blocks,
                                          tipbench::stats::verdict_words(k.verdict), noisy_mark(k))))
      << notes;
  EXPECT_EQ(e.blocks, 6u);  // block 1 recorded nothing, block 6 ran one arm only: both dropped
}

TEST(NoteVerdicts, LoaderCeilingIsTheHarnessComparisonOfEachCellOverTheModelsConsumption) {
  const tipbench::MeasureSettings s;
  CaseResult c;
  c.name = "dataloader/mode:loader_only/model:small_cnn/batch:8";
  c.params = {{"mode", "loader_only"}, {"model", "small_cnn"}, {"batch", "8"}};
  c.arms = {arm("w0", {{"workers", "0"}}, 600, 1, /*zero_block=*/2), arm("w1", {{"workers", "1"}}, 1010, 2),
            arm("w2", {{"workers", "2"}}, 1900, 3, -1, /*missing_block=*/4),
            arm("synthetic", {{"input", "synthetic"}}, 1000, 4)};
  const auto notes = joined(notes_of("dataloader", c, s));
  const std::map<tipbench::stats::Verdict, std::string> what{
      {tipbench::stats::Verdict::slower, "input-bound"},
      {tipbench::stats::Verdict::faster, "keeps up"},
      {tipbench::stats::Verdict::under_threshold, "about even"},
      {tipbench::stats::Verdict::no_significant_difference, "about even"}};
  for (std::size_t i = 0; i + 1 < c.arms.size(); ++i) {
    const auto k = harness_comparison(c.arms[i], c.arms.back(), s);
    const auto& e = k.estimate;
    EXPECT_TRUE(
        contains(notes, fmt::format("x{:.3f} [{:.3f}, {:.3f}]  {}", e.ratio, e.ci_low, e.ci_high, what.at(k.verdict))))
        << c.arms[i].arm << "\n"
        << notes;
  }
  // Block 2's zero is no measurement: the harness drops it, and so does the note (it once kept it).
  EXPECT_EQ(harness_comparison(c.arms[0], c.arms.back(), s).estimate.blocks, 7u);
}

}  // namespace

// amp's note: bf16 against IEEE fp32 (the claim's "faster than fp32") is the harness's comparison
// of those two arms; bf16 at twice the batch with less memory than fp32 at the batch holds the
// "2x larger batch" part.
TEST(NoteVerdicts, AmpSaysWhichPartOfTheClaimEachRatioTests) {
  const tipbench::MeasureSettings s;
  CaseResult c;
  c.name = "amp/model:resnet50/batch:64/layout:nchw";
  c.params = {{"model", "resnet50"}, {"batch", "64"}, {"layout", "nchw"}};
  c.arms = {arm("fp32", {{"precision", "fp32"}}, 1000, 1),
            arm("fp32_ieee", {{"precision", "fp32"}, {"tf32", "off"}}, 700, 2, /*zero_block=*/1),
            arm("bf16", {{"precision", "bf16"}}, 1300, 3, -1, /*missing_block=*/6),
            arm("bf16_2x", {{"precision", "bf16"}, {"batch_scale", "2"}}, 1400, 4)};
  const auto with_memory = [](ArmResult& a, std::int64_t bytes) {
    for (auto& t : a.trials) t.memory.peak_allocated_bytes = bytes;
    tipbench::summarize_arm(a);
  };
  for (std::size_t i = 0; i < c.arms.size(); ++i) with_memory(c.arms[i], i == 3 ? 900'000'000 : 1'000'000'000);
  c.arms[0].baseline = true;
  tipbench::summarize_case(c, s);
  const auto k = harness_comparison(c.arms[2], c.arms[1], s);
  const auto notes = joined(notes_of("amp", c, s));
  EXPECT_TRUE(contains(notes, fmt::format("\"faster than fp32\", against IEEE fp32 (TF32 off): bf16 x{:.3f} [{:.3f}, "
                                          "{:.3f}] {}{}",
                                          k.estimate.ratio, k.estimate.ci_low, k.estimate.ci_high,
                                          tipbench::stats::verdict_words(k.verdict), noisy_mark(k))))
      << notes;
  EXPECT_TRUE(contains(notes,
                       "\"2x larger batch\": bf16 at twice the batch against fp32 at the batch: peak memory "
                       "x0.900 [0.900, 0.900]"))
      << notes;
  EXPECT_TRUE(contains(notes, "the claim holds here")) << notes;
}
