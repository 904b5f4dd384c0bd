#include "input_shapes.h"

#include "device_memory.h"

#include <torch/torch.h>

#include <algorithm>
#include <utility>

namespace tipbench::suites {

namespace {

// 17 x 17 distinct sizes around the model's size, so up to 289 steps never repeat a shape.
constexpr std::int64_t kVaryingSizes = 17;
std::int64_t varying_stride(std::int64_t base) { return std::max<std::int64_t>(1, base / 28); }  // 8 px at 224

}  // namespace

std::pair<std::int64_t, std::int64_t> varying_shape(std::int64_t base, std::int64_t i) {
  auto size = [&](std::int64_t k) { return base + varying_stride(base) * (k - kVaryingSizes / 2); };
  return {size(i % kVaryingSizes), size((i / kVaryingSizes) % kVaryingSizes)};
}

std::int64_t varying_warmup_side(std::int64_t base, std::int64_t i) {
  return base + varying_stride(base) * (kVaryingSizes / 2 + 1 + i % kVaryingWarmupNew);
}

std::string InputShapesPolicy::name() const { return std::string("input shapes ") + input_shapes_name(shapes_); }

std::int64_t InputShapesPolicy::largest_side(std::int64_t image_size) const {
  // Staged once at the largest size the schedule uses; every step's input is cut from it.
  return shapes_ == InputShapes::varying ? varying_warmup_side(image_size, kVaryingWarmupNew - 1) : image_size;
}

void InputShapesPolicy::prepare(StepState& state) {
  timed_steps_ = 0;
  warmup_steps_ = 0;
  if (shapes_ == InputShapes::ascending) {
    const std::int64_t side = ascending_side(state.image_size(), 0);
    warmup_input_ = state.input_of(side, side);
  } else {
    state.fixed_inputs();  // made now, as the default step makes it
  }
}

StepInputs InputShapesPolicy::inputs(StepState& state, bool timing) {
  if (shapes_ == InputShapes::fixed) return state.fixed_inputs();
  if (!timing) {
    if (shapes_ == InputShapes::ascending) return {warmup_input_, state.labels()};
    const std::int64_t i = warmup_steps_++;
    if (i < kVaryingWarmupFixed) return state.fixed_inputs();
    const std::int64_t side = varying_warmup_side(state.image_size(), i - kVaryingWarmupFixed);
    return {state.input_of(side, side), state.labels()};
  }
  if (shapes_ == InputShapes::varying) {
    const auto [h, w] = varying_shape(state.image_size(), timed_steps_++);
    return {state.input_of(h, w), state.labels()};
  }
  const std::int64_t side = ascending_side(state.image_size(), timed_steps_++);
  return {state.input_of(side, side), state.labels()};
}

void InputShapesPolicy::begin_measurement(StepState& state) { mallocs_before_ = device_malloc_calls(state.device()); }

int InputShapesPolicy::fixed_warmup_steps() const {
  return shapes_ == InputShapes::varying ? kVaryingWarmupFixed + kVaryingWarmupNew : 0;
}

int InputShapesPolicy::timed_step_period() const {
  return shapes_ == InputShapes::ascending ? static_cast<int>(kAscendingSteps) : 1;
}

std::map<std::string, double> InputShapesPolicy::metrics(const StepState& state) const {
  if (shapes_ != InputShapes::ascending || !state.device().is_cuda()) return {};
  return {{"device_mallocs", static_cast<double>(device_malloc_calls(state.device()) - mallocs_before_)}};
}

nlohmann::json InputShapesPolicy::info(const StepState&) const {
  return {{"input_shapes", input_shapes_name(shapes_)}};
}

std::optional<std::string> InputShapesPolicy::capture_unsafe_reason() const {
  if (shapes_ == InputShapes::fixed) return std::nullopt;
  return "change its input shape";
}

std::int64_t ascending_side(std::int64_t base, std::int64_t step) {
  const std::int64_t smallest = base / 2;
  return smallest + (base - smallest) * (step % kAscendingSteps) / (kAscendingSteps - 1);
}

const char* input_shapes_name(InputShapes shapes) {
  switch (shapes) {
    case InputShapes::fixed: return "fixed";
    case InputShapes::varying: return "varying";
    case InputShapes::ascending: return "ascending";
  }
  return "?";
}

}  // namespace tipbench::suites
