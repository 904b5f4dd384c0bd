#include "tipbench/measure/trial.h"

#include "tipbench/device/device_init.h"

#include "tipbench/profiling/fixture_recorder.h"
#include "kept_arm.h"
#include "tipbench/device/memory_probe.h"
#include "tipbench/device/slowdown.h"
#include "tipbench/profiling/instruction_counter.h"
#include "tipbench/profiling/step_attribution.h"
#include "tipbench/profiling/step_profiler.h"
#include "tipbench/device/step_timer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

namespace tipbench {

namespace {

struct WarmupOutcome {
  int steps = 0;
  bool stable = false;
  double median_step_s = 0;
};

double median_of(std::vector<double> xs) {
  std::nth_element(xs.begin(), xs.begin() + xs.size() / 2, xs.end());
  return xs[xs.size() / 2];
}

// Untimed: run steps until the median of the last window agrees with the window before, so
// autotuners, JIT profiling runs and allocator growth stay out of the timed numbers. A kept
// workload (`target_step_s` > 0, its last trial's median step) is warm already: it may stop as
// soon as the median of a short window (about 0.1 s of steps, 2 to warmup_window of them) is back
// within the tolerance of that target. At least 2: the first step after the cache was emptied
// allocates again.
WarmupOutcome warm_up(Workload& workload, const c10::Device& device, const MeasureSettings& s,
                      double target_step_s = 0) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const int window = std::max(1, s.warmup_window);
  std::vector<double> times;
  WarmupOutcome out;
  const int fixed_steps = workload.fixed_warmup_steps();
  const auto within_tolerance = [&](double a, double b) { return std::abs(a / b - 1) <= s.warmup_tolerance; };
  constexpr double kRewarmSpanS = 0.1;
  const int rewarm_window =
      target_step_s > 0 ? std::min(window, std::max(2, static_cast<int>(std::ceil(kRewarmSpanS / target_step_s))))
                        : window;
  while (true) {
    const auto t0 = Clock::now();
    workload.step();
    detail::synchronize(device);
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    const int n = static_cast<int>(times.size());
    if (fixed_steps > 0) {
      if (n < fixed_steps) continue;
      out.stable = true;  // as many as the workload asked for
      break;
    }
    if (target_step_s > 0 && n >= rewarm_window &&
        within_tolerance(median_of({times.end() - rewarm_window, times.end()}), target_step_s)) {
      out.stable = true;
      break;
    }
    if (n >= std::max(s.warmup_min_steps, 2 * window)) {
      const double last = median_of({times.end() - window, times.end()});
      const double before = median_of({times.end() - 2 * window, times.end() - window});
      if (within_tolerance(last, before)) {
        out.stable = true;
        break;
      }
    }
    const double spent = std::chrono::duration<double>(Clock::now() - started).count();
    if (n >= s.warmup_max_steps || spent >= s.warmup_max_s) break;
  }
  out.steps = static_cast<int>(times.size());
  const int tail = std::min<int>(window, out.steps);
  out.median_step_s = median_of({times.end() - tail, times.end()});
  return out;
}

int timed_step_count(const WarmupOutcome& warmup, const MeasureSettings& s, int period) {
  const double for_min_time = std::ceil(s.trial_min_time_s / std::max(warmup.median_step_s, 1e-9));
  const double steps = std::max<double>(s.trial_min_steps, for_min_time);
  const int count = static_cast<int>(std::min<double>(steps, s.trial_max_steps));
  if (period <= 1) return count;
  // Whole periods, at least two; the cap rounded down to whole periods, never below two.
  const int periods = std::max(2, (count + period - 1) / period);
  return std::min(periods, std::max(2, s.trial_max_steps / period)) * period;
}

// A workload the arm's next trial may take over (the runner passed a slot, the workload allows
// it, and its warm-up is not a fixed epoch that restarts).
bool may_keep(const Workload& workload, const detail::KeptArm* kept) {
  return kept != nullptr && workload.keep_between_trials() && workload.fixed_warmup_steps() == 0;
}

// What the trial records of its workload once its steps are timed, wherever they ran.
void record_trial(TrialOutcome& out, const Workload& workload, const WarmupOutcome& warmup, int block, int position,
                  bool reused, const detail::KeptArm* kept) {
  Trial& t = out.trial;
  t.metrics = workload.metrics();
  t.block = block;
  t.position = position;
  t.warmup_steps = warmup.steps;
  t.warmup_stable = warmup.stable;
  t.reused_workload = reused;
  t.samples_per_step = workload.samples_per_step();
  double total_ms = 0;
  for (double ms : t.step_times_ms) total_ms += ms;
  // Total samples over total time: averaging per-step rates would overweight fast steps.
  const auto steps = static_cast<double>(t.step_times_ms.size());
  t.throughput_samples_per_s = total_ms > 0 ? steps * t.samples_per_step / (total_ms / 1000) : 0;
  out.info = workload.info();
  // Where the runner offered to keep it: whether it is (scripts/estimate_gpu_time.py plans with it).
  if (kept != nullptr && out.info.is_object()) out.info["kept_between_trials"] = may_keep(workload, kept);
  if (workload.memory_in_private_pool()) {  // Workload::memory_in_private_pool: reserved only
    t.memory.peak_allocated_bytes.reset();
    t.memory.timed_peak_allocated_bytes.reset();
    if (out.info.is_object()) out.info["memory_in_private_pool"] = true;
  }
  out.invalid_reason = workload.invalid_reason().value_or("");
}

// The re-warm's target is the warm-up's own measure (synchronised steps, wall clock), not the
// timed steps' (CUDA events, pipelined): a launch-bound step synchronised is slower than
// pipelined by more than the tolerance, and the early stop would never fire.
void keep_for_next_trial(std::unique_ptr<Workload> workload, const WarmupOutcome& warmup, int steps,
                         detail::KeptArm* kept) {
  if (!may_keep(*workload, kept)) return;
  kept->timed_steps = steps;
  kept->median_step_s = warmup.median_step_s;
  workload->set_aside();  // a knob it owns goes back while the other arms run
  kept->workload = std::move(workload);
}

// A workload whose steps run in another process: timed there, with that process's memory. The
// gate-calibration slowdown is this process's sleep and does not reach it; nor does --profile.
TrialOutcome finish_elsewhere(std::unique_ptr<Workload> workload, const WarmupOutcome& warmup, int steps, int block,
                              int position, bool reused, detail::KeptArm* kept, const MeasureSettings& settings) {
  workload->begin_measurement();
  StepsTimedElsewhere timed = workload->time_steps_elsewhere(steps);
  if (static_cast<int>(timed.step_times_ms.size()) != steps) {
    throw std::runtime_error("the workload timed " + std::to_string(timed.step_times_ms.size()) + " steps, not " +
                             std::to_string(steps));
  }
  TrialOutcome out;
  out.trial.step_times_ms = std::move(timed.step_times_ms);
  out.trial.step_cpu_times_ms = std::move(timed.step_cpu_times_ms);
  out.trial.memory = timed.memory;
  record_trial(out, *workload, warmup, block, position, reused, kept);
  // Said, so that an explanation says why it has nothing to compare.
  if (settings.explain_steps > 0) {
    out.trial.breakdown = StepBreakdown{
        .error = "its steps ran in another process (the Python worker), which --explain does not profile"};
  }
  if (settings.count_steps > 0 && block == 0) {
    out.trial.counts =
        StepCounts{.error = "its steps ran in another process (the Python worker), whose work is not counted"};
  }
  keep_for_next_trial(std::move(workload), warmup, steps, kept);
  return out;
}

}  // namespace

TrialOutcome run_trial(const Suite& suite, const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                       const MeasureSettings& settings, int block, int position, detail::KeptArm* kept,
                       const detail::HeldMemory* held_by_others) {
  const c10::Device device = context.device;
  initialize_device(device);  // before the memory probe's first allocator call (and in a trial process)
  detail::MemoryProbe memory(device);
  memory.begin();
  const bool reused = kept != nullptr && kept->workload != nullptr;
  std::unique_ptr<Workload> workload;
  if (reused) {
    workload = std::move(kept->workload);
    workload->take_back();
  } else {
    // Every arm starts from the same initial weights and inputs.
    torch::manual_seed(context.seed);
    workload = suite.prepare(context, c, arm, TrialInfo{.block = block, .position = position});
  }

  const WarmupOutcome warmup = warm_up(*workload, device, settings, reused ? kept->median_step_s : 0);
  const int steps = reused ? kept->timed_steps : timed_step_count(warmup, settings, workload->timed_step_period());
  if (workload->steps_run_elsewhere())
    return finish_elsewhere(std::move(workload), warmup, steps, block, position, reused, kept, settings);
  auto timer = detail::make_step_timer(device, steps);
  // A no-op unless the gate-calibration knob is set (then every result records it).
  detail::SlowdownInjector slowdown(device, settings.inject_slowdown_pct, warmup.median_step_s,
                                    settings.inject_slowdown_op, settings.inject_extra_ops);
  // CUDA: the warm-up and the timer's set-up left the stream idle. One more untimed step, not
  // waited for, keeps the device busy while the host launches the first timed step, so that
  // step's time holds no launch latency that steady state hides (the device never waits for the
  // host). An epoch-long step (a fixed warm-up) needs none and is not repeated for it.
  if (device.is_cuda() && workload->fixed_warmup_steps() == 0) workload->step();
  workload->begin_measurement();
  memory.begin_timed();
  timer->start();
  for (int i = 0; i < steps; ++i) {
    slowdown.before_step();
    workload->step();
    slowdown.after_step();
    timer->lap();
  }
  TrialOutcome out;
  Trial& t = out.trial;
  t.step_times_ms = timer->finish();
  t.step_cpu_times_ms = timer->cpu_times();
  t.memory =
      memory.end(held_by_others ? *held_by_others : detail::HeldMemory{}, reused ? kept->held : detail::HeldMemory{});
  record_trial(out, *workload, warmup, block, position, reused, kept);
  const std::string name = arm_name(suite.name(), c, arm);
  // After everything measured: never in the trial's numbers. Slowed as the timed steps were.
  // Counted work once per arm and run (its block-0 trial), from --explain's steps when it has them.
  const bool count_here = settings.count_steps > 0 && block == 0;
  if (settings.explain_steps > 0) {
    const auto recorded =
        detail::record_steps(*workload, device, settings.explain_steps, slowdown,
                             {.held_by_others_bytes = held_by_others ? held_by_others->allocated_bytes : 0,
                              .arm_name = name,
                              .block = block});
    t.breakdown = detail::breakdown_of(recorded);
    if (count_here) t.counts = detail::counts_of(recorded);
  } else if (count_here) {
    t.counts = detail::counts_of(detail::record_steps(*workload, device, settings.count_steps, slowdown));
  }
  if (count_here) {  // in steps of their own: the profiler's work is not the step's
    auto instructions =
        detail::count_instructions(*workload, device, settings.count_steps, slowdown, settings.instructions);
    t.counts->instructions_per_step = instructions.per_step;
    t.counts->instruction_counter = std::move(instructions.counter);
    t.counts->instructions_spread = instructions.spread;
    t.counts->instructions_onednn_isa = std::move(instructions.onednn_isa);
    t.counts->instructions_note = std::move(instructions.note);
  }
  if (!settings.profile_dir.empty() && block == settings.blocks - 1) {  // after everything measured
    const auto path = std::filesystem::path(settings.profile_dir) / detail::trace_file_name(name);
    out.profile = detail::profile_steps(*workload, device, settings.profile_steps, path.string());
  }
  if (may_keep(*workload, kept) && !reused) kept->held = memory.held_since_begin();
  if (detail::fixtures_wanted() && device.is_cuda()) {
    detail::record_fixture("allocator", name, block,
                           {{"arm", name},
                            {"block", block},
                            {"reused", reused},
                            {"held_by_others_bytes", held_by_others ? held_by_others->allocated_bytes : 0},
                            {"readings", memory.readings_json()},
                            {"peak_allocated_bytes", t.memory.peak_allocated_bytes.value_or(-1)},
                            {"peak_reserved_bytes", t.memory.peak_reserved_bytes.value_or(-1)},
                            {"timed_peak_allocated_bytes", t.memory.timed_peak_allocated_bytes.value_or(-1)}});
  }
  keep_for_next_trial(std::move(workload), warmup, steps, kept);
  return out;
}

}  // namespace tipbench
