// Why two arms differ: their trials' step breakdowns (step_breakdown.h, `run --explain`)
// compared key by key. Per key (phase and ATen op) the difference in time per step, mean over
// the profiled pairs, with a 95% t-interval (paired by block when the two arms ran interleaved,
// Welch's otherwise); ops and kernels that appear or vanish;
// on a GPU the change in idle time, also ranked as a cause (kIdleHostWait, kIdleOther: a
// launch-bound step's regression is the device waiting for the host); the memory peak's
// composition and its difference. The
// listed keys' share of the step's difference says how much they explain; under
// kExplainedShareFloor the explanation says "unexplained" rather than guess. docs/explain.md.
//   const auto why = tipbench::explain_arms(head_arm, base_arm, {.paired = true});
//   for (const auto& line : tipbench::explanation_lines(why)) fmt::print("  {}\n", line);
#pragma once

#include "tipbench/results/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tipbench {

// The listed causes must account for at least this share of the step's difference.
inline constexpr double kExplainedShareFloor = 0.5;
// A resolved key ranks first only when its delta is at least this share of the step's (and 0.1% of
// the baseline's step): a resolved microsecond is no cause of a millisecond.
inline constexpr double kMaterialShare = 0.01;

struct ExplainOptions {
  bool paired = true;   // the arms' trials pair by block (one interleaved session)
  std::size_t top = 5;  // causes listed
};

struct DeltaInterval {
  double delta = 0;  // treatment - baseline, mean over the profiled trials
  double low = 0;    // 95% t-interval
  double high = 0;
  bool resolved() const { return low > 0 || high < 0; }
};

struct Cause {
  std::string phase;
  std::string op;
  DeltaInterval ms_per_step;
  double baseline_ms = 0;  // the baseline's mean time per step in this key
  double baseline_calls = 0;
  double treatment_calls = 0;
  std::vector<std::string> new_kernels;       // CUDA: kernels only the treatment launched here
  std::vector<std::string> vanished_kernels;  // and those only the baseline did
  bool is_new() const { return baseline_calls == 0 && treatment_calls > 0; }
  bool vanished() const { return treatment_calls == 0 && baseline_calls > 0; }
};

struct MemoryCause {
  std::string phase;
  std::string op;
  double delta_bytes = 0;  // median over trials, treatment - baseline
  double baseline_bytes = 0;
};

struct Explanation {
  // Why there is none ("" when there is): an arm without breakdowns, too few pairs.
  std::string missing;
  // How the keys were compared when not op by op ("" when they were): one arm replays a CUDA
  // graph, whose kernels run under no op, so each side's device time is one key.
  std::string note;
  std::size_t pairs = 0;  // profiled trials compared (pairs, or the smaller side unpaired)
  bool paired = true;
  int steps_per_trial = 0;
  double baseline_step_ms = 0;
  DeltaInterval step_ms;  // the profiled steps' wall time (the profiler's cost included)
  // The timed steps' mean step time, the same trials paired the same way: the difference the
  // verdict is about, and what the share below is of (the profiled one when this is unresolved).
  double baseline_timed_step_ms = 0;
  std::optional<DeltaInterval> timed_step_ms;
  // Ranked: keys whose interval excludes 0 and whose delta is material (kMaterialShare) first,
  // then the rest, each by |delta|; at most top.
  std::vector<Cause> causes;
  // The listed resolved causes' deltas of the step's sign, summed, over the step's delta (timed
  // when resolved, else profiled); 0 when neither is resolved.
  double explained_share = 0;
  bool unexplained = true;           // no step delta resolved, or the share is under kExplainedShareFloor
  std::vector<Cause> count_changes;  // keys whose calls per step differ (new, vanished ops), not listed above
  std::optional<DeltaInterval> gpu_idle_host_wait_ms;
  std::optional<DeltaInterval> gpu_idle_other_ms;
  std::string memory_device;
  double baseline_peak_bytes = 0;  // medians over trials
  double treatment_peak_bytes = 0;
  std::vector<MemoryCause> memory;  // the peak's difference by its largest contributors
};

// Compares the arms' breakdowns; `missing` says why not when either arm has fewer than 2.
Explanation explain_arms(const ArmResult& treatment, const ArmResult& baseline, const ExplainOptions& options = {});

// Lines for a console, a log or a PR comment, without indentation: the step's difference and the
// share explained, then one line per cause, count change, idle time and memory contributor.
//   "step +0.52 ms/step [0.40, 0.66] over 8 profiled pairs; the 3 keys below explain 94% of it"
//   "backward  aten::convolution_backward  +0.31 ms/step [0.27, 0.35]  (kernel a replaced by b)"
std::vector<std::string> explanation_lines(const Explanation& e, std::size_t top = 5);
// The same in one short phrase for a table cell: "aten::addmm +0.31 ms/step (92% explained)".
std::string explanation_headline(const Explanation& e);

nlohmann::ordered_json explanation_to_json(const Explanation& e);

}  // namespace tipbench
