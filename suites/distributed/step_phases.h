// Where a data-parallel step spends its time, per rank: the whole step and the exposed
// communication (from the end of backward until the averaged gradients are ready, i.e. the
// all-reduce time that backward did not hide). The host clock on a CPU; CUDA events on a GPU,
// read only when the totals are asked for (after the harness has synchronised), so timing
// never synchronises inside a step. Example:
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
