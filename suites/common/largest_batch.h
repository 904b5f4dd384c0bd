// The "largest batch that fits" experiment of the memory-saving tips (amp, checkpointing,
// inference): per model, a case {model, batch: largest} whose arms each train or infer at the
// largest batch their setting fits on a CUDA device (an out-of-memory search, device_memory.h).
// Every arm of a case is searched just before the case's first block (Suite::prepare_case), when
// no other case's kept arm holds memory and before any of its trials, so no trial's memory peak
// includes a failed attempt; the trials reuse the answer (a fresh-process trial searches again).
// The search's time is in the run's time budget; a case a resumed run finished is not searched,
// and a resumed case reuses the batches its arms' info recorded. Off CUDA the case is skipped
// with the reason. Such a suite derives from SuiteWithLargestBatch, given how
// to make an arm's workload at a batch. Example (suites/inference.cpp):
//   class Inference final : public SuiteWithLargestBatch {
//     Inference() : SuiteWithLargestBatch(make_at) {}
//     cases:  return training_cases(context, arms, {}, {.largest_batch = true});
//     notes:  if (auto found = largest_batch_text(arm)) ...
#pragma once

#include "common/device_memory.h"
#include "tipbench/suite/suite.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

CaseSpec largest_batch_case(const std::string& model, std::vector<ArmSpec> arms);
bool is_largest_batch_case(const CaseSpec& c);
// The largest batch the search found for this arm's trials (its info), for a note: "2674", or
// "2674 (the 32-bit index limit: memory was not reached)" where the search stopped at a cap, not
// at memory (device_memory.h, BatchSearch::limited_by); none for another case.
std::optional<std::string> largest_batch_text(const ArmResult& arm);

class LargestBatchCases {
 public:
  // The arm's workload at `batch`.
  using MakeAt = std::function<std::unique_ptr<Workload>(const SuiteContext&, const CaseSpec&, const ArmSpec&,
                                                         std::int64_t batch)>;
  explicit LargestBatchCases(MakeAt make_at) : make_at_(std::move(make_at)) {}

  // Why a largest-batch case cannot run on this device (off CUDA); none for any other case.
  static std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c);
  // Searches every arm of `c`, when it is a largest-batch case, that the suite does not skip (its
  // skip_reason keeps the search to CUDA); an arm whose `so_far` info holds a search (a resumed
  // case) takes that batch instead. Never throws for a failed search: that arm's trial fails
  // with the reason, the other cases run.
  void search_case(const Suite& suite, const SuiteContext& context, const CaseSpec& c, const CaseResult& so_far) const;
  // The arm's workload at the case's batch, or in a largest-batch case at its largest batch, the
  // search recorded in its info ("largest_batch_search"); std::runtime_error when not even batch 1
  // fits (with the last probe's error), which fails only this arm.
  std::unique_ptr<Workload> prepare(const Suite& suite, const SuiteContext& context, const CaseSpec& c,
                                    const ArmSpec& arm) const;

 private:
  // Starts from the model's default batch on the device: --batch-size does not move the answer.
  BatchSearch search(const Suite& suite, const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm) const;

  MakeAt make_at_;
  mutable LargestBatchSearches searches_;
};

// A suite whose cases include largest-batch ones: prepare_case searches them, prepare makes every
// arm's workload (at its case's batch, or at the largest found), skip_reason skips them off CUDA.
// A suite that skips more returns SuiteWithLargestBatch::skip_reason last.
class SuiteWithLargestBatch : public Suite {
 public:
  explicit SuiteWithLargestBatch(LargestBatchCases::MakeAt make_at) : largest_(std::move(make_at)) {}
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec&) const override {
    return LargestBatchCases::skip_reason(context, c);
  }
  void prepare_case(const SuiteContext& context, const CaseSpec& c, const CaseResult& so_far) const override {
    largest_.search_case(*this, context, c, so_far);
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    return largest_.prepare(*this, context, c, arm);
  }

 private:
  LargestBatchCases largest_;
};

}  // namespace tipbench::suites
