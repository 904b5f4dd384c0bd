#include "distributed/step_phases.h"

#include "tipbench/device/cuda_event_pool.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <deque>

namespace tipbench::distributed {

namespace {
// Steps whose events may be pending at once before any is read back: the host runs at most a
// few steps ahead of the device (the launch queue), so the pool rarely grows past this.
constexpr int kReservedSteps = 16;
}  // namespace

// One event per mark per step, from the pool; a step's elapsed times are added to the totals
// once its end event has completed, and its events go back to the pool.
struct StepPhases::CudaEvents {
  explicit CudaEvents(c10::DeviceIndex device) : pool(device, kReservedSteps * kMarks) {}
  using Step = std::array<std::unique_ptr<at::cuda::CUDAEvent>, kMarks>;

  void read_back(bool wait) {
    while (!pending.empty()) {
      Step& s = pending.front();
      if (wait) {
        s[end]->synchronize();
      } else if (!s[end]->query()) {
        break;  // later steps finish later: they are on the same stream
      }
      ++done.steps;
      done.step_ms += s[start]->elapsed_time(*s[end]);
      done.comm_ms += s[backward_done]->elapsed_time(*s[gradients_ready]);
      release(s);
      pending.pop_front();
    }
  }
  void release(Step& s) {
    for (auto& e : s) pool.give_back(std::move(e));
  }

  CudaEventPool pool;
  Step current;
  std::deque<Step> pending;
  Totals done;
};

StepPhases::StepPhases(const c10::Device& device) : device_(device) {
  if (device_.is_cuda()) cuda_ = std::make_unique<CudaEvents>(device_.index());
}

StepPhases::~StepPhases() = default;

void StepPhases::mark(Mark m) {
  if (!cuda_) {
    now_[m] = std::chrono::steady_clock::now();
    return;
  }
  auto& event = cuda_->current[m];
  if (!event) event = cuda_->pool.take();
  // On the backward thread, autograd has made the forward's stream current (the engine's
  // stream guard): the same stream as the main thread's marks.
  event->record(c10::cuda::getCurrentCUDAStream(device_.index()));
}

void StepPhases::next_step() {
  if (cuda_) {
    cuda_->pending.push_back(std::move(cuda_->current));
    cuda_->current = {};
    cuda_->read_back(/*wait=*/false);
    return;
  }
  using ms = std::chrono::duration<double, std::milli>;
  ++host_.steps;
  host_.step_ms += ms(now_[end] - now_[start]).count();
  host_.comm_ms += ms(now_[gradients_ready] - now_[backward_done]).count();
}

void StepPhases::clear() {
  host_ = {};
  if (!cuda_) return;
  for (auto& s : cuda_->pending) cuda_->release(s);  // warm-up steps: not counted
  cuda_->pending.clear();
  cuda_->done = {};
}

StepPhases::Totals StepPhases::totals_ms() const {
  if (!cuda_) return host_;
  cuda_->read_back(/*wait=*/true);
  return cuda_->done;
}

}  // namespace tipbench::distributed
