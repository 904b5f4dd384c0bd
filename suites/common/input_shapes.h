// Input shapes that change while timed, a policy of the step (step_policy.h) shared by the tips
// whose benefit depends on them: cudnn_benchmark (a new shape every step: every shape is
// autotuned again) and preallocate (inputs that grow: the allocator's cached blocks too small).
// Example:
//   spec.policies.push_back(std::make_shared<InputShapesPolicy>(InputShapes::varying));
#pragma once

#include "step_policy.h"

#include <cstdint>
#include <utility>

namespace tipbench::suites {

enum class InputShapes {
  fixed,  // every step the same (batch, 3, size, size)
  // A shape not seen before at every timed step. Warm-up: kVaryingWarmupFixed steps at the fixed
  // shape, then kVaryingWarmupNew at new shapes outside the timed schedule, so the trial's step
  // count is sized by what a new shape costs (an autotuning step can take 30x a fixed one).
  varying,
  // Warm-up at the smallest shape, then timed steps whose size grows from half the model's image
  // size to its size and starts again (ascending_side), as a length-bucketed sampler feeds a
  // model variable-length inputs: a short batch followed by longer ones.
  ascending,
};
const char* input_shapes_name(InputShapes shapes);  // "fixed", "varying", "ascending"

inline constexpr int kVaryingWarmupFixed = 2;
inline constexpr int kVaryingWarmupNew = 3;
// (height, width) of timed step i under InputShapes::varying: 17 x 17 sizes around the model's
// size `base` (8 px apart at 224), so up to 289 steps never repeat a shape.
std::pair<std::int64_t, std::int64_t> varying_shape(std::int64_t base, std::int64_t i);
// The side of new-shape warm-up step i (0, 1, ...): square, beyond the timed grid's largest side,
// so no timed shape has been seen when timing begins.
std::int64_t varying_warmup_side(std::int64_t base, std::int64_t i);

// The side of timed step `step` under InputShapes::ascending: kAscendingSteps sizes from base/2
// up to base, repeated.
inline constexpr std::int64_t kAscendingSteps = 8;
std::int64_t ascending_side(std::int64_t base, std::int64_t step);

// Feeds each step the input of its shape schedule (the staged labels). Records input_shapes in
// the info and, for ascending shapes on CUDA, device_mallocs: the device allocations the caching
// allocator made while timed.
class InputShapesPolicy final : public Policy<InputShapesPolicy> {
 public:
  explicit InputShapesPolicy(InputShapes shapes) : shapes_(shapes) {}
  std::string name() const override;
  std::int64_t largest_side(std::int64_t image_size) const override;
  void prepare(StepState& state) override;
  StepInputs inputs(StepState& state, bool timing) override;
  void begin_measurement(StepState& state) override;
  // Ascending shapes time whole cycles of kAscendingSteps (the first meets every size cold).
  int timed_step_period() const override;
  // Varying shapes warm up with a fixed count: kVaryingWarmupFixed + kVaryingWarmupNew.
  int fixed_warmup_steps() const override;
  std::map<std::string, double> metrics(const StepState& state) const override;
  nlohmann::json info(const StepState&) const override;
  std::optional<std::string> capture_unsafe_reason() const override;
  // Changing shapes start from the warm-up input and the schedule's first step: a fresh workload.
  bool keeps_between_trials() const override { return shapes_ == InputShapes::fixed; }

 private:
  InputShapes shapes_;
  at::Tensor warmup_input_;  // ascending: the smallest
  std::int64_t timed_steps_ = 0;
  std::int64_t warmup_steps_ = 0;
  std::int64_t mallocs_before_ = 0;
};

}  // namespace tipbench::suites
