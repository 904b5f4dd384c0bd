// Internal: the --inject-slowdown test knob (MeasureSettings::inject_slowdown_pct). Makes every
// timed step slower by a known percentage so the regression gate's detection rate can be measured
// on real runs. CPU: after each step, a busy-wait of pct% of that step's own duration. CUDA: a
// delay d of pct% of the warm-up's median step time after each step, on both sides: a spin kernel
// (at::cuda::sleep) of d enqueued on the device's current stream, then a busy-wait of d on the
// host, so a launch-bound step slows as much as a device-bound one, and nothing synchronises
// inside the timed region.
// With an op (MeasureSettings::inject_slowdown_op, `--inject-slowdown-op`): the same delay, pct% of
// the warm-up's median step time, is spent inside that ATen op instead, at its first call in each
// step: a busy-wait in a global RecordFunction end callback, which runs before the profiler's own
// (global callbacks come first), so a profile counts it as the op's self time. A known cause for
// `--explain` to find; on a GPU a spin kernel of the delay is launched there too, inside the op, so
// a breakdown (which counts an op's kernels' device time) charges it to the op. The callback makes
// every op record itself (about 2% of a small_cnn step on a CPU), so the op mode at 0% registers it
// without a delay: `gate --head-inject-slowdown-op` gives the base that, and the two sides differ
// by the delay alone.
// Extra ops (MeasureSettings::inject_extra_ops, `--inject-extra-ops N`): the count gate's knob.
// After each step, N more calls of aten::add on two 16-element tensors of the device: a known
// amount of added work (N top-level ops, N allocations of 64 bytes, on CUDA N kernels), and no
// delay of its own.
#pragma once

#include <ATen/Tensor.h>
#include <ATen/record_function.h>
#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace tipbench::detail {

class SlowdownInjector {
 public:
  // pct <= 0 turns the injector into a no-op. warmup_step_s sizes the CUDA delay.
  SlowdownInjector(const c10::Device& device, double pct, double warmup_step_s, const std::string& op = "",
                   int extra_ops = 0);
  ~SlowdownInjector();
  SlowdownInjector(const SlowdownInjector&) = delete;
  SlowdownInjector& operator=(const SlowdownInjector&) = delete;
  void before_step();
  void after_step();

 private:
  using Clock = std::chrono::steady_clock;
  c10::Device device_;
  double fraction_ = 0;
  std::int64_t cuda_cycles_ = 0;  // spin-kernel length per step
  Clock::duration cuda_delay_{};  // the same delay, waited on the host
  Clock::time_point step_started_;
  std::optional<at::CallbackHandle> op_callback_;  // the op mode's RecordFunction callback
  int extra_ops_ = 0;
  at::Tensor extra_a_, extra_b_;  // the extra ops' operands
};

// Whether the dispatcher knows an op of this name ("aten::addmm", any overload): the op mode
// slows an op by name, and a name nothing registered would never be called.
bool op_is_registered(const std::string& name);

// How many steps of this process spent an op-mode delay (the op ran while a step was pending):
// 0 after a run whose op never ran inside a timed step.
std::int64_t op_delays_spent();

}  // namespace tipbench::detail
