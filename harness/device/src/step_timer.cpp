#include "tipbench/device/step_timer.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include <chrono>
#include <ctime>

namespace tipbench::detail {

namespace {

// CPU time of the whole process (all threads), in milliseconds.
double process_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

std::vector<double> differences(const std::vector<double>& stamps) {
  std::vector<double> out;
  for (std::size_t i = 1; i < stamps.size(); ++i) out.push_back(stamps[i] - stamps[i - 1]);
  return out;
}

class CpuStepTimer final : public StepTimer {
 public:
  explicit CpuStepTimer(int steps) {
    stamps_.reserve(steps + 1);
    cpu_stamps_.reserve(steps + 1);
  }
  void start() override {
    cpu_stamps_.assign(1, process_cpu_ms());
    stamps_.assign(1, Clock::now());
  }
  void lap() override {
    stamps_.push_back(Clock::now());
    cpu_stamps_.push_back(process_cpu_ms());
  }
  std::vector<double> finish() override {
    std::vector<double> ms;
    for (std::size_t i = 1; i < stamps_.size(); ++i) {
      ms.push_back(std::chrono::duration<double, std::milli>(stamps_[i] - stamps_[i - 1]).count());
    }
    return ms;
  }
  std::vector<double> cpu_times() const override { return differences(cpu_stamps_); }

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> stamps_;
  std::vector<double> cpu_stamps_;
};

class CudaStepTimer final : public StepTimer {
 public:
  CudaStepTimer(const c10::Device& device, int steps)
      : stream_(c10::cuda::getCurrentCUDAStream(device.has_index() ? device.index() : -1)) {
    // cudaEventDefault: the default flags disable timing and elapsed_time would refuse them.
    events_.reserve(steps + 1);
    for (int i = 0; i <= steps; ++i) {
      events_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
      events_.back()->record(stream_);  // creates the CUDA event now, outside the timed region
    }
    stream_.synchronize();
  }
  void start() override {
    next_ = 0;
    record();
  }
  void lap() override { record(); }
  std::vector<double> finish() override {
    events_[next_ - 1]->synchronize();
    std::vector<double> ms;
    for (std::size_t i = 1; i < next_; ++i) ms.push_back(events_[i - 1]->elapsed_time(*events_[i]));
    return ms;
  }

 private:
  void record() { events_.at(next_++)->record(stream_); }

  c10::cuda::CUDAStream stream_;
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<StepTimer> make_step_timer(const c10::Device& device, int steps) {
  if (device.is_cuda()) return std::make_unique<CudaStepTimer>(device, steps);
  return std::make_unique<CpuStepTimer>(steps);
}

void synchronize(const c10::Device& device) {
  if (!device.is_cuda()) return;
  // Every stream of the device, not the current one alone: side streams (the streams suite, a
  // captured step's, NCCL's) finish too (torch.cuda.synchronize = cudaDeviceSynchronize).
  const c10::cuda::OptionalCUDAGuard on(device);
  c10::cuda::device_synchronize();
}

}  // namespace tipbench::detail
