#include "tipbench/trial.h"

#include "tipbench/device_init.h"

#include "memory_probe.h"
#include "slowdown.h"
#include "step_profiler.h"
#include "step_timer.h"

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
// autotuners, JIT profiling runs and allocator growth stay out of the timed numbers.
WarmupOutcome warm_up(Workload& workload, const c10::Device& device, const MeasureSettings& s) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const int window = std::max(1, s.warmup_window);
  std::vector<double> times;
  WarmupOutcome out;
  const int fixed_steps = workload.fixed_warmup_steps();
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
    if (n >= std::max(s.warmup_min_steps, 2 * window)) {
      const double last = median_of({times.end() - window, times.end()});
      const double before = median_of({times.end() - 2 * window, times.end() - window});
      if (std::abs(last / before - 1) <= s.warmup_tolerance) {
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

int timed_step_count(const WarmupOutcome& warmup, const MeasureSettings& s) {
  const double for_min_time = std::ceil(s.trial_min_time_s / std::max(warmup.median_step_s, 1e-9));
  const double steps = std::max<double>(s.trial_min_steps, for_min_time);
  return static_cast<int>(std::min<double>(steps, s.trial_max_steps));
}

}  // namespace

TrialOutcome run_trial(const Suite& suite, const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                       const MeasureSettings& settings, int block, int position) {
  const c10::Device device = context.device;
  initialize_device(device);  // before the memory probe's first allocator call (and in a trial process)
  detail::MemoryProbe memory(device);
  memory.begin();
  // Every arm starts from the same initial weights and inputs.
  torch::manual_seed(context.seed);
  auto workload = suite.prepare(context, c, arm, TrialInfo{.block = block, .position = position});

  const WarmupOutcome warmup = warm_up(*workload, device, settings);
  const int steps = timed_step_count(warmup, settings);
  auto timer = detail::make_step_timer(device, steps);
  // A no-op unless the gate-calibration knob is set (then every result records it).
  detail::SlowdownInjector slowdown(device, settings.inject_slowdown_pct, warmup.median_step_s);
  // CUDA: the warm-up and the timer's set-up left the stream idle. One more untimed step, not
  // waited for, keeps the device busy while the host launches the first timed step, so that
  // step's time holds no launch latency that steady state hides (the device never waits for the
  // host). An epoch-long step (a fixed warm-up) needs none and is not repeated for it.
  if (device.is_cuda() && workload->fixed_warmup_steps() == 0) workload->step();
  workload->begin_measurement();
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
  t.metrics = workload->metrics();
  t.memory = memory.end();
  t.block = block;
  t.position = position;
  t.warmup_steps = warmup.steps;
  t.warmup_stable = warmup.stable;
  t.samples_per_step = workload->samples_per_step();
  double total_ms = 0;
  for (double ms : t.step_times_ms) total_ms += ms;
  // Total samples over total time: averaging per-step rates would overweight fast steps.
  t.throughput_samples_per_s = total_ms > 0 ? steps * t.samples_per_step / (total_ms / 1000) : 0;
  out.info = workload->info();
  out.invalid_reason = workload->invalid_reason().value_or("");
  if (!settings.profile_dir.empty() && block == settings.blocks - 1) {  // after everything measured
    const auto path =
        std::filesystem::path(settings.profile_dir) / detail::trace_file_name(arm_name(suite.name(), c, arm));
    out.profile = detail::profile_steps(*workload, device, settings.profile_steps, path.string());
  }
  return out;
}

}  // namespace tipbench
