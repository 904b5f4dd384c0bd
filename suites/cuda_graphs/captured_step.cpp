#include "captured_step.h"

#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

namespace tipbench::suites {

struct CapturedStep::Graph {
  at::cuda::CUDAGraph graph;
  c10::cuda::CUDAStream stream;
  explicit Graph(c10::cuda::CUDAStream s) : stream(s) {}
};

namespace {

// `waiter` runs nothing enqueued after this call before `waitee`'s work so far has finished
// (Python's Stream.wait_stream).
void wait_stream(const c10::cuda::CUDAStream& waiter, const c10::cuda::CUDAStream& waitee) {
  at::cuda::CUDAEvent done;
  done.record(waitee);
  done.block(waiter);
}

// The autocast weight cache off for the guard's lifetime (torch.autocast(cache_enabled=False)).
class AutocastCacheOff {
 public:
  AutocastCacheOff() : before_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(before_); }

 private:
  bool before_;
};

}  // namespace

CapturedStep::CapturedStep(const c10::Device& device, std::function<void()> body, int warmup_steps,
                           const std::function<void()>& before_capture)
    : warmup_steps_(warmup_steps) {
  if (auto why = cuda_graph_unavailable(device)) throw std::invalid_argument(*why);
  const auto index = device.has_index() ? device.index() : c10::cuda::current_device();
  c10::cuda::CUDAGuard device_guard(index);
  const auto caller = c10::cuda::getCurrentCUDAStream(index);
  graph_ = std::make_unique<Graph>(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index));
  AutocastCacheOff no_cache;
  {
    // Side stream: ordered after the caller's pending work, and the caller after the warm-up.
    wait_stream(graph_->stream, caller);
    c10::cuda::CUDAStreamGuard on_side(graph_->stream);
    for (int i = 0; i < warmup_steps; ++i) body();
    if (before_capture) before_capture();
    graph_->graph.capture_begin();
    body();
    graph_->graph.capture_end();
  }
  wait_stream(caller, graph_->stream);
}

CapturedStep::~CapturedStep() = default;

void CapturedStep::replay() { graph_->graph.replay(); }

std::optional<std::string> cuda_graph_unavailable(const c10::Device& device) {
  if (!device.is_cuda()) return "CUDA graphs capture CUDA kernels: there is nothing to capture on a " + device.str();
  if (!torch::cuda::is_available()) return "no CUDA device here";
  return std::nullopt;
}

}  // namespace tipbench::suites
