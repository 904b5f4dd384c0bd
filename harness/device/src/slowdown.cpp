#include "tipbench/device/slowdown.h"

#include <ATen/Functions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>

namespace tipbench::detail {

namespace {

// The op mode's state. RecordFunction callbacks are plain function pointers, so it is global: one
// injector with an op at a time (a trial's).
struct OpDelay {
  std::string op;
  std::chrono::steady_clock::duration delay{};
  std::int64_t cuda_cycles = 0;      // CUDA: a spin kernel of the same delay, launched inside the op
  std::atomic<bool> pending{false};  // the step has not spent its delay yet
};
OpDelay op_delay;
std::atomic<bool> op_delay_in_use{false};
std::atomic<std::int64_t> op_delays_spent_count{0};

void spend_in_op(const at::RecordFunction& fn, at::ObserverContext*) {
  if (!op_delay.pending.load(std::memory_order_relaxed) || op_delay.delay.count() == 0 || op_delay.op != fn.name())
    return;
  if (!op_delay.pending.exchange(false)) return;
  op_delays_spent_count.fetch_add(1, std::memory_order_relaxed);
  // On a GPU the op's cost is its kernels' device time, which is what a breakdown counts: a spin
  // kernel of the delay, launched here on the current stream (at::cuda::sleep, ATen/cuda/Sleep.cu),
  // is the op's own, because the profiler's end callback (thread-local, run after the global
  // ones: record_function.cpp, LocalCallbackManager::rebuild_scope) has not yet popped the op's
  // correlation id, and the launch falls inside the op's recorded range. The host waits too, so
  // a launch-bound step slows as a device-bound one does.
  if (op_delay.cuda_cycles > 0) at::cuda::sleep(op_delay.cuda_cycles);
  const auto until = std::chrono::steady_clock::now() + op_delay.delay;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Spin-kernel cycles per millisecond on this device, measured with events: the SM clock under
// load is what the kernel counts, and it differs from the nominal clock rate.
double cuda_cycles_per_ms(const c10::Device& device) {
  constexpr std::int64_t kProbeCycles = 10'000'000;
  // at::cuda::sleep launches on the current device's current stream (ATen/cuda/Sleep.cu).
  c10::cuda::OptionalCUDAGuard on(device);
  auto stream = c10::cuda::getCurrentCUDAStream(device.has_index() ? device.index() : -1);
  at::cuda::CUDAEvent start(cudaEventDefault);
  at::cuda::CUDAEvent stop(cudaEventDefault);
  at::cuda::sleep(kProbeCycles / 10);  // first launch loads the kernel
  start.record(stream);
  at::cuda::sleep(kProbeCycles);
  stop.record(stream);
  stop.synchronize();
  const double ms = start.elapsed_time(stop);
  return ms > 0 ? static_cast<double>(kProbeCycles) / ms : 0;
}

}  // namespace

bool op_is_registered(const std::string& name) {
  for (const auto& op : c10::Dispatcher::singleton().getAllOpNames()) {
    if (op.name == name) return true;
  }
  return false;
}

std::int64_t op_delays_spent() { return op_delays_spent_count.load(); }

SlowdownInjector::SlowdownInjector(const c10::Device& device, double pct, double warmup_step_s, const std::string& op,
                                   int extra_ops)
    : device_(device), fraction_(std::max(0.0, pct) / 100), extra_ops_(std::max(0, extra_ops)) {
  if (extra_ops_ > 0) {
    extra_a_ = at::ones({16}, at::TensorOptions().device(device_));
    extra_b_ = at::ones({16}, at::TensorOptions().device(device_));
  }
  if (!op.empty()) {  // at 0%, the callback alone: the other side of a fair --explain calibration
    if (op_delay_in_use.exchange(true)) throw std::logic_error("two op slowdowns at once");
    op_delay.op = op;
    op_delay.delay =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(fraction_ * warmup_step_s));
    op_delay.cuda_cycles = 0;
    if (fraction_ > 0 && device_.is_cuda()) {
      const double delay_ms = fraction_ * warmup_step_s * 1000;
      op_delay.cuda_cycles = static_cast<std::int64_t>(std::llround(delay_ms * cuda_cycles_per_ms(device_)));
    }
    op_delay.pending = false;
    // Zero delay: the callback still runs, so both sides pay RecordFunction's cost on every op.
    op_callback_ = at::addGlobalCallback(
        at::RecordFunctionCallback(
            [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> { return nullptr; }, spend_in_op)
            .needsInputs(false)
            .scopes({at::RecordScope::FUNCTION}));
    fraction_ = 0;  // the step itself is not slowed
    return;
  }
  if (fraction_ > 0 && device_.is_cuda()) {
    const double delay_ms = fraction_ * warmup_step_s * 1000;
    cuda_delay_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(delay_ms));
    cuda_cycles_ = static_cast<std::int64_t>(std::llround(delay_ms * cuda_cycles_per_ms(device_)));
  }
}

SlowdownInjector::~SlowdownInjector() {
  if (!op_callback_) return;
  at::removeCallback(*op_callback_);
  op_delay.pending = false;
  op_delay_in_use = false;
}

void SlowdownInjector::before_step() {
  if (op_callback_) op_delay.pending = true;
  if (fraction_ > 0 && !device_.is_cuda()) step_started_ = Clock::now();
}

void SlowdownInjector::after_step() {
  if (op_callback_) op_delay.pending = false;  // a step without the op spends nothing
  for (int i = 0; i < extra_ops_; ++i) at::add(extra_a_, extra_b_);
  if (fraction_ <= 0) return;
  if (device_.is_cuda()) {
    // The delay d on both sides: a spin kernel of d on the device and, once it is enqueued, a
    // busy-wait of d on the host. A step then takes max(host, device) + d whichever side sets the
    // pace; the kernel alone would fill the device's idle time in a launch-bound step and slow it
    // by less than asked.
    if (cuda_cycles_ > 0) {
      c10::cuda::OptionalCUDAGuard on(device_);
      at::cuda::sleep(cuda_cycles_);
    }
    const auto until = Clock::now() + cuda_delay_;
    while (Clock::now() < until) {
    }
    return;
  }
  // CPU ops are synchronous: the step's own duration is known here, so the delay scales with it.
  const auto step = Clock::now() - step_started_;
  const auto until = step_started_ + std::chrono::duration_cast<Clock::duration>(step * (1 + fraction_));
  while (Clock::now() < until) {
  }
}

}  // namespace tipbench::detail
