#include "kineto_session.h"

#include "tipbench/device/step_timer.h"
#include "tipbench/common/error_text.h"

#include <torch/csrc/profiler/orchestration/observer.h>

#include <chrono>
#include <cstdlib>
#include <set>

namespace tipbench::detail {

KinetoSession profile_session(const c10::Device& device, bool memory, const std::function<void()>& steps) {
  namespace kineto = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  KinetoSession session;
  std::set<ActivityType> activities{ActivityType::CPU};
  if (device.is_cuda()) activities.insert(ActivityType::CUDA);
  const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/false, /*profile_memory=*/memory);
  // Kineto logs an ERROR line on a machine without a CUDA driver and stage lines on every run;
  // level 5 keeps it quiet unless the user asked for its logs (read when Kineto initialises).
  ::setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
  if (torch::profiler::impl::profilerEnabled()) {
    // A second session would end the arm's own.
    session.error = "a profiler is already recording in this arm's workload; no extra steps were profiled";
    return session;
  }
  bool enabled = false;
  try {
    synchronize(device);
    kineto::prepareProfiler(config, activities);
    kineto::enableProfiler(config, activities);
    enabled = true;
    const auto started = std::chrono::steady_clock::now();
    steps();
    synchronize(device);
    session.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    enabled = false;
    session.result = kineto::disableProfiler();
  } catch (const std::exception& e) {
    if (enabled) {
      try {
        kineto::disableProfiler();
      } catch (const std::exception&) {  // already off
      }
    }
    session.error = error_summary(e);
  }
  return session;
}

}  // namespace tipbench::detail
