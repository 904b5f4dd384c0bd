#include "input_shapes.h"

#include "device_memory.h"

#include <torch/torch.h>

#include <algorithm>
#include <utility>

namespace tipbench::suites {

namespace {

// (height, width) of timed step i in the varying-shapes schedule: 17 x 17 distinct sizes around
// the model's size, so up to 289 steps never repeat a shape (later steps wrap around).
constexpr std::int64_t kVaryingSizes = 17;
std::int64_t varying_stride(std::int64_t base) { return std::max<std::int64_t>(1, base / 28); }  // 8 px at 224

std::pair<std::int64_t, std::int64_t> varying_shape(std::int64_t base, std::int64_t i) {
  auto size = [&](std::int64_t k) { return base + varying_stride(base) * (k - kVaryingSizes / 2); };
  return {size(i % kVaryingSizes), size((i / kVaryingSizes) % kVaryingSizes)};
}

}  // namespace

std::string InputShapesPolicy::name() const { return std::string("input shapes ") + input_shapes_name(shapes_); }

std::int64_t InputShapesPolicy::largest_side(std::int64_t image_size) const {
  // Staged once at the largest size the schedule uses; every step's input is cut from it.
  return shapes_ == InputShapes::varying ? image_size + 8 * varying_stride(image_size) : image_size;
}

void InputShapesPolicy::prepare(StepState& state) {
  timed_steps_ = 0;
  if (shapes_ == InputShapes::ascending) {
    const std::int64_t side = ascending_side(state.image_size(), 0);
    warmup_input_ = state.input_of(side, side);
  } else {
    state.fixed_inputs();  // made now, as the default step makes it
  }
}

StepInputs InputShapesPolicy::inputs(StepState& state, bool timing) {
  if (shapes_ == InputShapes::fixed) return state.fixed_inputs();
  if (!timing)
    return shapes_ == InputShapes::ascending ? StepInputs{warmup_input_, state.labels()} : state.fixed_inputs();
  if (shapes_ == InputShapes::varying) {
    const auto [h, w] = varying_shape(state.image_size(), timed_steps_++);
    return {state.input_of(h, w), state.labels()};
  }
  const std::int64_t side = ascending_side(state.image_size(), timed_steps_++);
  return {state.input_of(side, side), state.labels()};
}

void InputShapesPolicy::begin_measurement(StepState& state) { mallocs_before_ = device_malloc_calls(state.device()); }

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
