// Internal: the --inject-slowdown test knob (MeasureSettings::inject_slowdown_pct). Makes every
// timed step slower by a known percentage so the regression gate's detection rate can be measured
// on real runs. CPU: after each step, a busy-wait of pct% of that step's own duration. CUDA: a
// delay d of pct% of the warm-up's median step time after each step, on both sides: a spin kernel
// (at::cuda::sleep) of d enqueued on the device's current stream, then a busy-wait of d on the
// host, so a launch-bound step slows as much as a device-bound one, and nothing synchronises
// inside the timed region.
#pragma once

#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>

namespace tipbench::detail {

class SlowdownInjector {
 public:
  // pct <= 0 turns the injector into a no-op. warmup_step_s sizes the CUDA delay.
  SlowdownInjector(const c10::Device& device, double pct, double warmup_step_s);
  void before_step();
  void after_step();

 private:
  using Clock = std::chrono::steady_clock;
  c10::Device device_;
  double fraction_ = 0;
  std::int64_t cuda_cycles_ = 0;  // spin-kernel length per step
  Clock::duration cuda_delay_{};  // the same delay, waited on the host
  Clock::time_point step_started_;
};

}  // namespace tipbench::detail
