// Where a data-parallel step spends its time, per rank: the whole step and the exposed
// communication (from the moment backward has produced the last gradient until the averaged
// gradients are back in .grad(), i.e. the all-reduce time that backward did not hide, and the
// copy out of the buckets). The host clock on a CPU; CUDA events on a GPU, taken from a pool
// made before the timed steps and read back as they complete, so timing neither creates events
// nor synchronises inside a step. Example:
//   phases.mark(StepPhases::start); ...; phases.mark(StepPhases::end); phases.next_step();
#pragma once

#include <c10/core/Device.h>

#include <array>
#include <chrono>
#include <memory>
#include <vector>

namespace tipbench::distributed {

class StepPhases {
 public:
  enum Mark { start, backward_done, gradients_ready, end, kMarks };
  struct Totals {
    int steps = 0;
    double step_ms = 0;  // start -> end
    double comm_ms = 0;  // backward_done -> gradients_ready
  };

  explicit StepPhases(const c10::Device& device);
  ~StepPhases();
  // May be called from autograd's backward thread (backward_done), between the main thread's
  // start and gradients_ready marks.
  void mark(Mark m);
  void next_step();
  void clear();  // the timed steps begin
  Totals totals_ms() const;

 private:
  struct CudaEvents;  // defined where the CUDA headers are included
  c10::Device device_;
  std::array<std::chrono::steady_clock::time_point, kMarks> now_{};
  Totals host_;
  std::unique_ptr<CudaEvents> cuda_;
};

}  // namespace tipbench::distributed
