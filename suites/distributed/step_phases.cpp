#include "distributed/step_phases.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

namespace tipbench::distributed {

// One event per mark per timed step; elapsed times are read after the harness's final sync.
struct StepPhases::CudaEvents {
  std::vector<std::array<std::unique_ptr<at::cuda::CUDAEvent>, kMarks>> steps;
  std::array<std::unique_ptr<at::cuda::CUDAEvent>, kMarks> current;
};

StepPhases::StepPhases(const c10::Device& device) : device_(device) {
  if (device_.is_cuda()) cuda_ = std::make_unique<CudaEvents>();
}

StepPhases::~StepPhases() = default;

void StepPhases::mark(Mark m) {
  if (!cuda_) {
    now_[m] = std::chrono::steady_clock::now();
    return;
  }
  auto event = std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault);  // timing-enabled
  event->record(c10::cuda::getCurrentCUDAStream(device_.index()));
  cuda_->current[m] = std::move(event);
}

void StepPhases::next_step() {
  if (cuda_) {
    cuda_->steps.push_back(std::move(cuda_->current));
    return;
  }
  using ms = std::chrono::duration<double, std::milli>;
  ++host_.steps;
  host_.step_ms += ms(now_[end] - now_[start]).count();
  host_.comm_ms += ms(now_[gradients_ready] - now_[backward_done]).count();
}

void StepPhases::clear() {
  host_ = {};
  if (cuda_) cuda_->steps.clear();
}

StepPhases::Totals StepPhases::totals_ms() const {
  if (!cuda_) return host_;
  Totals t;
  for (const auto& s : cuda_->steps) {
    s[end]->synchronize();
    ++t.steps;
    t.step_ms += s[start]->elapsed_time(*s[end]);
    t.comm_ms += s[backward_done]->elapsed_time(*s[gradients_ready]);
  }
  return t;
}

}  // namespace tipbench::distributed
