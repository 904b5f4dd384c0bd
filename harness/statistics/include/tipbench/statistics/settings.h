// How a run measures: one plain struct, inline defaults, units in the field names. The CLI
// fills it (defaults < --quick preset < flags); it is recorded verbatim in every result. Example:
//   tipbench::MeasureSettings s = tipbench::quick_settings();  s.min_blocks = s.blocks = 12;
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace tipbench {

struct MeasureSettings {
  // Warm-up (untimed): at least warmup_min_steps, then until the median of the last
  // warmup_window steps is within warmup_tolerance of the window before, or a cap is hit.
  int warmup_min_steps = 5;
  int warmup_max_steps = 200;
  double warmup_max_s = 60.0;
  int warmup_window = 5;
  double warmup_tolerance = 0.05;
  // A trial times at least trial_min_steps and at least trial_min_time_s (estimated from the
  // warm-up step time, so nothing synchronises inside the timed region), at most trial_max_steps.
  // Sized for a GPU, where a step's noise is far below a block's (docs/measurement.md): each
  // trial pays its own build and warm-up, so short trials and more blocks cost less wall time
  // than long trials for the same interval.
  int trial_min_steps = 5;
  double trial_min_time_s = 0.5;
  int trial_max_steps = 5000;
  // In-process arms keep their workload (model, optimizer state, staged inputs, warm caches) from
  // one of their trials of a case to the next where the workload allows it, and re-warm only until
  // the step time is back (Workload::keep_between_trials); false builds every trial anew
  // (`run --fresh-trials`, every run before schema 1.8).
  bool keep_workloads = true;
  // Blocks: one trial of every arm, in shuffled order. Sequential (block_looks.h): a pilot of
  // min_blocks, then looks at fixed counts up to `blocks`, stopping when every throughput
  // comparison of the case is settled; min_blocks >= blocks is a fixed count (`--blocks N`).
  int min_blocks = 5;
  int blocks = 20;
  // A comparison is precise when its interval's half-width is at most this share of its ratio.
  double precision = 0.005;
  // `run --time-budget`: the wall time the run's cases share, in seconds (0: none). Each case
  // gets what is left divided by the cases left; a case stops at the block that would overrun its
  // share (after at least kMinBudgetBlocks), and one with nothing left is skipped (runner.h).
  double time_budget_s = 0;
  // Verdicts: the smallest relative change that matters, and the bootstrap.
  double practical_threshold = 0.02;
  int bootstrap_resamples = 2000;
  std::uint64_t seed = 0;
  // Test knob for calibrating the regression gate: every timed step is slowed down on purpose by
  // this percentage (0 = off). Recorded in every result so an injected run never passes for a
  // real one; `tipbench baseline save` refuses such a run. See docs/gate.md.
  double inject_slowdown_pct = 0;
  // With the knob above: the slowdown is spent inside this ATen op ("aten::addmm"), at its first
  // call in each step, instead of after the step: a known cause for `--explain` to find. "" off.
  std::string inject_slowdown_op;
  // `run --profile DIR`: after each arm's last timed trial, profile_steps more steps under the
  // Kineto profiler, written as a Chrome trace into this directory ("" = off). Never timed.
  std::string profile_dir;
  int profile_steps = 5;
  // `run --explain`: after each trial's timed steps, this many more steps under the profiler,
  // broken down by phase, op and kernel (Trial::breakdown; explain.h compares two arms). 0: off.
  int explain_steps = 0;
  // Counted work (Trial::counts): in each arm's block-0 trial, after its timed steps, one
  // uncounted step and this many counted ones under the profiler (never timed). 0: off.
  int count_steps = 2;
  // Counted CPU instructions (StepCounts::instructions_per_step), in the same trial, in their own
  // steps after the profiled ones: "auto" counts them with perf_event where the CPU's PMU is
  // open to this process; "callgrind" runs the whole run under Callgrind (`run --instructions
  // callgrind`: times are Callgrind's then, not the machine's); "off". Needs count_steps > 0.
  std::string instructions = "auto";
  // Test knob for calibrating the count gate: every step (timed, profiled and counted) makes this
  // many more calls of one small ATen op (aten::add of two 16-element tensors) after its own
  // work: a known amount of added work. Recorded like inject_slowdown_pct; 0 = off.
  int inject_extra_ops = 0;
};

// The tiny budget for CI and smoke runs: a handful of short trials.
MeasureSettings quick_settings();

// A row is noisy when its between-block CV exceeds half the practical threshold: then an effect
// of the threshold's size cannot be resolved with the blocks at hand.
double noisy_cv_limit(const MeasureSettings& settings);

void to_json(nlohmann::json& j, const MeasureSettings& s);
// Unknown keys are an error (std::invalid_argument), missing keys keep their defaults.
void from_json(const nlohmann::json& j, MeasureSettings& s);

}  // namespace tipbench
