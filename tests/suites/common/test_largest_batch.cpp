// The largest-batch search of the memory-saving suites (amp, checkpointing, inference,
// batch_size), on the CPU with injected probe failures: any failed probe counts as "does not
// fit" with its reason kept (an out-of-memory error, and also the c10::Error a CUDA kernel's
// 32-bit index check raises before memory runs out); the search never tries a batch whose
// largest tensor would pass 2^31 - 1 elements (measured per sample by observing a step's ops);
// and a search that fails marks only its own arm, through the real runner.
#include "common/device_memory.h"
#include "common/largest_batch.h"
#include "common/tensor_extent.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"
#include "tipbench/measure/runner.h"

#include "tiny_run.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <map>

namespace {

namespace s = tipbench::suites;
using tipbench::ArmSpec;
using tipbench::ArmStatus;
using tipbench::CaseSpec;
using tipbench::SuiteContext;
using tipbench::TrialInfo;

// An attempt that runs out of memory above `capacity`, as the CUDA caching allocator does.
std::function<void(std::int64_t)> fake_device(std::int64_t capacity, int* calls = nullptr) {
  return [=](std::int64_t batch) {
    if (calls) ++*calls;
    TORCH_CHECK_WITH(OutOfMemoryError, batch <= capacity, "CUDA out of memory. Tried to allocate ", batch, " MiB");
  };
}

TEST(BatchSearch, FindsTheLargestFitAfterCatchingOutOfMemory) {
  const auto search = s::search_largest_batch(fake_device(300), /*start=*/32, /*limit=*/1 << 16);
  EXPECT_LE(search.largest, 300);
  EXPECT_GE(search.largest, 300 - 300 / 16);
  int ooms = 0;
  for (const auto& p : search.probes) {
    EXPECT_EQ(p.fits, p.batch <= 300) << p.batch;
    if (!p.fits) {
      ++ooms;
      EXPECT_NE(p.error.find("out of memory"), std::string::npos) << p.error;
    }
  }
  EXPECT_GE(ooms, 2) << "the search goes on after the first out-of-memory";
  EXPECT_EQ(search.probes.front().batch, 32);
  EXPECT_EQ(search.probes[4].batch, 512);  // 32, 64, 128, 256 fit, 512 does not
}

TEST(BatchSearch, HalvesWhenTheStartDoesNotFitAndStopsAtTheLimit) {
  EXPECT_EQ(s::search_largest_batch(fake_device(20), 256, 4096).largest, 20);  // 256..32 fail, 16 fits, bisect
  EXPECT_EQ(s::search_largest_batch(fake_device(0), 8, 4096).largest, 0);
  int calls = 0;
  const auto capped = s::search_largest_batch(fake_device(1 << 20, &calls), 64, 1000);
  EXPECT_EQ(capped.largest, 1000);
  EXPECT_EQ(calls, 5);  // 64, 128, 256, 512, 1000: nothing above the limit is tried
}

// What ATen's max_pool2d CUDA kernel raises past 2^31 - 1 output elements, before any
// out-of-memory error: a size limit like memory, so a probe that hits it does not fit.
TEST(BatchSearch, AnyFailedProbeCountsAsNotFittingWithItsFirstLine) {
  auto index_checked = [](std::int64_t batch) {
    TORCH_CHECK(batch <= 300, "integer out of range\nmore lines of the c10 message");
  };
  const auto search = s::search_largest_batch(index_checked, 32, 1 << 16);
  EXPECT_LE(search.largest, 300);
  EXPECT_GE(search.largest, 300 - 300 / 16);
  for (const auto& p : search.probes) {
    if (!p.fits) {
      EXPECT_EQ(p.error, "integer out of range") << p.batch;
    }
  }
}

TEST(BatchSearch, AWorkloadBrokenAtEveryBatchEndsAtZeroWithItsReason) {
  auto broken = [](std::int64_t) { throw std::runtime_error("shape mismatch"); };
  const auto search = s::search_largest_batch(broken, 32, 1024);
  EXPECT_EQ(search.largest, 0);
  ASSERT_FALSE(search.probes.empty());
  EXPECT_EQ(search.probes.back().batch, 1);
  EXPECT_EQ(search.probes.back().error, "shape mismatch");
}

// small_cnn training as the suites run it: SGD, cross-entropy, BatchNorm in train mode.
class SmallCnnStep final : public tipbench::Workload {
 public:
  explicit SmallCnnStep(std::int64_t batch)
      : model_(tipbench::models::make_model("small_cnn")),
        optimizer_(model_.ptr()->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9)),
        images_(torch::randn({batch, 3, 32, 32})),
        labels_(torch::randint(10, {batch}, torch::kLong)) {}
  void step() override {
    optimizer_.zero_grad();
    torch::nn::functional::cross_entropy(model_.forward(images_), labels_).backward();
    optimizer_.step();
  }
  std::int64_t samples_per_step() const override { return images_.size(0); }

 private:
  torch::nn::AnyModule model_;
  torch::optim::SGD optimizer_;
  torch::Tensor images_, labels_;
};

// small_cnn's first stage (3x3 stride-2 conv to 32 channels on 32 px) makes its largest tensors:
// 32 x 16 x 16 elements per sample, forward (conv, BatchNorm, ReLU) and backward alike.
TEST(TensorExtent, MeasuresTheLargestTensorPerSampleOfATrainingStep) {
  const auto per_sample =
      s::largest_tensor_elements_per_sample([](std::int64_t b) { return std::make_unique<SmallCnnStep>(b); });
  EXPECT_EQ(per_sample, 32 * 16 * 16);
  EXPECT_EQ(s::batch_limit_for_32bit_indexing(per_sample), 2147483647 / 8192);
  EXPECT_EQ(s::batch_limit_for_32bit_indexing(std::int64_t{1} << 40), 1);
}

// A step whose tensors hold 2^20 elements per sample, made on the meta device (shapes without
// memory): out of memory above `capacity`, "integer out of range" always when `broken`.
class MetaStep final : public tipbench::Workload {
 public:
  MetaStep(std::int64_t batch, std::int64_t capacity, bool broken)
      : batch_(batch), capacity_(capacity), broken_(broken) {}
  void step() override {
    TORCH_CHECK(!broken_, "integer out of range");
    auto x = torch::empty({batch_, std::int64_t{1} << 20}, torch::TensorOptions().device(torch::kMeta));
    auto y = x * 2;  // an op with a meta kernel: its output is observed too
    TORCH_CHECK_WITH(OutOfMemoryError, batch_ <= capacity_, "CUDA out of memory at batch ", batch_);
  }
  std::int64_t samples_per_step() const override { return batch_; }

 private:
  std::int64_t batch_, capacity_;
  bool broken_;
};

TEST(LargestBatchSearch, NeverTriesABatchWhoseTensorsPass32BitIndexing) {
  const auto search = s::search_largest_workload_batch(
      torch::kCPU, [](std::int64_t b) { return std::make_unique<MetaStep>(b, /*capacity=*/100000, false); },
      /*start=*/256, /*limit=*/1 << 16);
  EXPECT_EQ(search.tensor_elements_per_sample, std::int64_t{1} << 20);
  EXPECT_EQ(search.index_limit, 2047);  // (2^31 - 1) / 2^20
  EXPECT_EQ(search.largest, 2047);
  for (const auto& p : search.probes) EXPECT_LE(p.batch, 2047);
  // The index limit, not memory, stopped it: notes say so (review D1, 2026-11-28).
  EXPECT_EQ(search.limited_by, "index_limit");
  EXPECT_EQ(s::largest_batch_words(search), "2047 (the 32-bit index limit: memory was not reached)");
  const auto by_memory = s::search_largest_workload_batch(
      torch::kCPU, [](std::int64_t b) { return std::make_unique<MetaStep>(b, /*capacity=*/300, false); }, 256, 1 << 16);
  EXPECT_EQ(by_memory.limited_by, "memory");
  EXPECT_EQ(s::largest_batch_words(by_memory), std::to_string(by_memory.largest));
  nlohmann::json recorded = search;
  EXPECT_EQ(s::batch_search_from_json(recorded).limited_by, "index_limit") << "kept for a resumed run's notes";
}

// A suite of the test's own with a regular case and a largest-batch case of two arms, one of
// which fails at every batch; nothing skips it on the CPU.
class SearchingSuite final : public tipbench::Suite {
 public:
  SearchingSuite()
      : largest_([this](const SuiteContext&, const CaseSpec&, const ArmSpec& arm, std::int64_t batch) {
          ++made[arm.name];
          return std::make_unique<MetaStep>(batch, /*capacity=*/3000, arm.name == "broken");
        }) {}
  mutable std::map<std::string, int> made;  // workloads made by the search and the trials, by arm
  std::string name() const override { return "searching"; }
  std::string description() const override { return "a largest-batch case on the CPU"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override {
    return {{{{"model", "small_cnn"}, {"batch", "8"}}, {{"plain", {}}}},
            s::largest_batch_case("small_cnn", {{"ok", {}}, {"broken", {}}})};
  }
  void prepare_case(const SuiteContext& context, const CaseSpec& c, const tipbench::CaseResult& so_far) const override {
    largest_.search_case(*this, context, c, so_far);
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    if (s::is_largest_batch_case(c)) return largest_.prepare(*this, context, c, arm);
    return std::make_unique<MetaStep>(8, 8, false);
  }

 private:
  s::LargestBatchCases largest_;
};

tipbench::RunPlan one_block_plan(const tipbench::Suite& suite) { return tipbench::testing::tiny_run_plan(suite, 1); }
using tipbench::testing::run_quietly;

TEST(LargestBatchCases, AFailedSearchFailsOnlyItsOwnArm) {
  const SearchingSuite suite;
  const auto results = run_quietly(one_block_plan(suite));

  const auto& cases = results.at(0).cases;
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].arms.at(0).status, ArmStatus::ok) << "the regular case runs";
  const auto& ok = cases[1].arms.at(0);
  const auto& broken = cases[1].arms.at(1);
  ASSERT_EQ(ok.status, ArmStatus::ok) << ok.reason;
  const auto& search = ok.info.at("largest_batch_search");
  EXPECT_EQ(search.at("largest"), 2047) << "capped by 32-bit indexing, below the memory limit of 3000";
  EXPECT_EQ(search.at("index_limit"), 2047);
  EXPECT_EQ(broken.status, ArmStatus::failed);
  EXPECT_NE(broken.reason.find("not even batch 1 fits: integer out of range"), std::string::npos) << broken.reason;
  EXPECT_EQ(broken.reason.find('\n'), std::string::npos) << broken.reason;
}

// The search grows the batch until something fails; on a CPU that is the machine's memory (it
// swaps or the OOM killer ends the run), so every registered suite skips its largest-batch
// cases there, with the reason. LargestBatchCases relies on that skip.
TEST(LargestBatchCases, EveryRegisteredSuiteSkipsThemOnTheCpu) {
  SuiteContext context;  // the CPU
  int largest_cases = 0;
  for (const auto* suite : tipbench::all_suites()) {
    for (const auto& c : suite->cases(context)) {
      if (!s::is_largest_batch_case(c)) continue;
      ++largest_cases;
      for (const auto& arm : c.arms) {
        const auto why = suite->skip_reason(context, c, arm);
        EXPECT_TRUE(why.has_value()) << tipbench::arm_name(suite->name(), c, arm) << " would search on the CPU";
      }
    }
  }
  EXPECT_GE(largest_cases, 3) << "amp, checkpointing and inference have one each";
}

// The searches run when their case starts, inside the run's time budget, never before the run's
// other cases; a resumed run does not search a case it finished, and a resumed case takes the
// batch its earlier blocks ran at from its arms' info (review finding 1, 2026-11-28: all searches
// ran before the budget's clock, again on every --resume).
TEST(LargestBatchCases, ACaseIsSearchedWhenItStartsAndAResumedOneKeepsItsBatch) {
  const SearchingSuite fresh;
  auto plan = one_block_plan(fresh);
  const auto first = run_quietly(plan);
  ASSERT_EQ(first.at(0).cases.size(), 2u);
  EXPECT_GT(fresh.made.at("ok"), 5) << "searched: halvings, doublings and bisection, then the trial";
  const auto& ok = first.at(0).cases[1].arms.at(0);
  ASSERT_EQ(ok.status, tipbench::ArmStatus::ok) << ok.reason;

  // Resumed with the regular case finished and the largest-batch case in progress after one of
  // two blocks, its "ok" arm recorded at batch 1000.
  const SearchingSuite resumed;
  plan = one_block_plan(resumed);
  plan.settings.blocks = plan.settings.min_blocks = 2;
  plan.finished_cases[first.at(0).cases[0].name] = first.at(0).cases[0];
  tipbench::CaseInProgress in_progress{"searching", first.at(0).cases[1], 1};
  auto& kept_ok = in_progress.case_result.arms.at(0);
  kept_ok.info["largest_batch_search"] = {{"largest", 1000}, {"probes", {{{"batch", 1000}, {"fits", true}}}}};
  plan.resumed_case = in_progress;
  const auto again = run_quietly(plan);
  const auto& ok_again = again.at(0).cases[1].arms.at(0);
  ASSERT_EQ(ok_again.status, tipbench::ArmStatus::ok) << ok_again.reason;
  EXPECT_EQ(ok_again.info.at("largest_batch_search").at("largest"), 1000) << "the batch its first block ran at";
  EXPECT_EQ(resumed.made.at("ok"), 1) << "no search: only the second block's trial was built";
  EXPECT_FALSE(resumed.made.contains("plain")) << "the finished case is not run again";

  // A bad recorded search (from a partial file: input from elsewhere) fails the case's arms with
  // the reason, and the run goes on.
  const SearchingSuite bad;
  plan = one_block_plan(bad);
  plan.settings.blocks = plan.settings.min_blocks = 2;
  kept_ok.info["largest_batch_search"] = {{"largest", -5}, {"probes", nlohmann::json::array()}};
  plan.resumed_case = in_progress;
  const auto refused = run_quietly(plan);
  const auto& ok_refused = refused.at(0).cases[1].arms.at(0);
  EXPECT_EQ(ok_refused.status, tipbench::ArmStatus::failed);
  EXPECT_NE(ok_refused.reason.find("the case's preparation failed"), std::string::npos) << ok_refused.reason;
  EXPECT_EQ(refused.at(0).cases[0].arms.at(0).status, tipbench::ArmStatus::ok) << "the regular case ran";
}

}  // namespace
