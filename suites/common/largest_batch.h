// The "largest batch that fits" experiment of the memory-saving tips (amp, checkpointing,
// inference): per model, a case {model, batch: largest} whose arms each train or infer at the
// largest batch their setting fits on a CUDA device (an out-of-memory search, device_memory.h).
// Every arm is searched in prepare_run, before any trial, so no trial's memory peak includes a
// failed attempt; the trials reuse the answer (a fresh-process trial searches again). Off CUDA
// the case is skipped with the reason. A suite owns one, given how to make an arm's workload at a
// batch, and hands it every case. Example:
//   cases:        return training_cases(context, arms, {}, {.largest_batch = true});
//   skip_reason:  return largest_.skip_reason(context, c);
//   prepare_run:  largest_.search_all(*this, context);
//   prepare:      return largest_.prepare(*this, context, c, arm);
//   notes:        if (auto found = largest_batch_found(arm)) ...
#pragma once

#include "common/device_memory.h"
#include "tipbench/suite.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

CaseSpec largest_batch_case(const std::string& model, std::vector<ArmSpec> arms);
bool is_largest_batch_case(const CaseSpec& c);
// The largest batch the search found for this arm's trials (its info); none for another case.
std::optional<std::int64_t> largest_batch_found(const ArmResult& arm);

class LargestBatchCases {
 public:
  // The arm's workload at `batch`.
  using MakeAt = std::function<std::unique_ptr<Workload>(const SuiteContext&, const CaseSpec&, const ArmSpec&,
                                                         std::int64_t batch)>;
  explicit LargestBatchCases(MakeAt make_at) : make_at_(std::move(make_at)) {}

  // Why a largest-batch case cannot run on this device (off CUDA); none for any other case.
  static std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c);
  // Searches every arm of `suite`'s largest-batch cases that the suite does not skip (its
  // skip_reason keeps the search to CUDA). Never throws for a failed search: that arm's trial
  // fails with the reason, the other cases run.
  void search_all(const Suite& suite, const SuiteContext& context) const;
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

}  // namespace tipbench::suites
