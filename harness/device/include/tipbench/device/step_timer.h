// Internal: per-step times of the timed region. CUDA: one event per step boundary on the current
// stream, read after one synchronisation at the end. CPU: the monotonic clock (CPU ops are
// synchronous, so the clock sees the work), and beside it the process's CPU time (every thread):
// time the scheduler gave to other jobs or the hypervisor stole is not in it.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <vector>

namespace tipbench::detail {

class StepTimer {
 public:
  virtual ~StepTimer() = default;
  virtual void start() = 0;                  // before the first step
  virtual void lap() = 0;                    // after each step
  virtual std::vector<double> finish() = 0;  // per-step milliseconds; waits for the device
  // Per-step process CPU milliseconds (all threads), after finish(); empty on CUDA, where the host
  // thread only queues work.
  virtual std::vector<double> cpu_times() const { return {}; }
};

// `steps` sizes the event pool up front so nothing is created inside the timed region.
std::unique_ptr<StepTimer> make_step_timer(const c10::Device& device, int steps);
// Blocks until the device has finished the work queued on any of its streams (a no-op on CPU).
void synchronize(const c10::Device& device);

}  // namespace tipbench::detail
