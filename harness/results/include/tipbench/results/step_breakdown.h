// What a trial's few extra profiled steps spent their time and memory on (`run --explain`): per
// key (the step's phase and the ATen op; on a GPU the op's kernels too) the time per step, and
// the memory live at the steps' allocation peak by the op that allocated it. profiled_steps.h
// makes it from the profiler's events. Recorded per trial,
// so two arms' breakdowns pair by block as their timed steps do; explain.h compares them.
// Plain data, no LibTorch: the harness fills it (harness/profiling/src/step_attribution.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tipbench {

// The phases of a training step (suites/common/training.cpp marks them with RecordFunction
// scopes named "tipbench::<phase>"); "step" is what no phase holds (a workload without phases,
// or time between them). An op's phase on a GPU's backward thread is "backward".
inline constexpr const char* kStepPhase = "step";
// The op of a key that holds a phase's own time outside every ATen op (CPU), or device time no
// op launched (GPU).
inline constexpr const char* kOutsideOps = "[outside ops]";
// The memory bucket of what was live before the profiled steps began (weights, optimizer state).
inline constexpr const char* kLiveBefore = "[live before the steps]";
// The op of device time a CUDA graph replay launched: no op runs while a graph replays.
inline constexpr const char* kGraphReplay = "[cuda graph replay]";
// explain.h's keys beside the ops on a GPU: the device's idle time, which a launch-bound step
// spends waiting for the host, compared as a cause like any op's time (phase "step").
inline constexpr const char* kIdleHostWait = "[gpu idle: waiting for the host]";
inline constexpr const char* kIdleOther = "[gpu idle: other]";
// explain.h's one key of all device time, when one arm replays a CUDA graph (no op runs in it)
// and the other does not: their ops cannot be matched.
inline constexpr const char* kAllDeviceTime = "[device time, all ops]";

struct KernelTime {
  std::string name;  // normalised: no template arguments, parameter lists or hashes
  double ms_per_step = 0;
  double calls_per_step = 0;
};

struct BreakdownKey {
  std::string phase;  // "forward", "backward", "optimizer", "zero_grad", "data", "step"
  std::string op;     // "aten::mkldnn_convolution", or kOutsideOps
  // CPU: the op's self time (its child ops' time excluded). CUDA: its kernels' device time.
  double ms_per_step = 0;
  double calls_per_step = 0;
  std::vector<KernelTime> kernels;  // CUDA only
};

// Bytes live at the profiled steps' allocation peak that one op allocated during them.
struct MemoryShare {
  std::string phase;
  std::string op;  // or kLiveBefore
  std::int64_t bytes = 0;
};

struct StepBreakdown {
  int steps = 0;
  double step_ms = 0;  // wall time per profiled step (the profiler's own cost included)
  std::vector<BreakdownKey> keys;
  // CUDA: the device's idle time per step, split by whether it waited for the host to launch the
  // next kernel (host_wait) or for anything else (a copy, a sync, a dependency).
  std::optional<double> gpu_idle_host_wait_ms;
  std::optional<double> gpu_idle_other_ms;
  // CUDA: kernels, copies and memsets per step (since 1.13). The same on every trial of an arm
  // unless a profiler session lost records (pytorch#192021): the first-call check compares them.
  std::optional<double> device_events_per_step;
  std::string memory_device;  // "cpu" or "cuda": whose allocator the peak is of ("" none)
  // CPU: the peak of what the steps allocated and held; CUDA: the caching allocator's peak total
  // during the steps, less what other kept arms hold (profiled_steps.h)
  std::int64_t peak_bytes = 0;
  std::vector<MemoryShare> peak;  // its composition, largest first
  std::string error;              // why the steps could not be profiled ("" when they were)
};

nlohmann::ordered_json breakdown_to_json(const StepBreakdown& b);
// Throws std::invalid_argument or nlohmann's exceptions on a bad document: names with control
// characters, numbers that are negative or not finite, more keys than kMaxBreakdownKeys.
StepBreakdown breakdown_from_json(const nlohmann::ordered_json& j);
inline constexpr std::size_t kMaxBreakdownKeys = 4096;

}  // namespace tipbench
