// A training step captured once as a CUDA graph and replayed: one launch for all of the step's
// kernels, so the host's per-kernel launch cost disappears. What PyTorch's whole-network capture
// recipe requires, this does: warm-up steps on a side stream before capture (lazy state such as
// momentum buffers and cuDNN plans exists by then), gradients set to None before capture (backward
// then allocates them from the graph's private pool, at fixed addresses), capture on a non-default
// stream, and the autocast weight cache off while capturing (a cast cached outside the graph would
// be replayed stale). The step's inputs must be static tensors: copy new data into them, never
// rebind them. Host-side state is frozen at its capture value: an optimizer whose update reads a
// step count on the host (torch::optim::AdamW, the foreach AdamW) replays the first captured
// step's bias correction forever; the cuda_graphs suite refuses those (graph_capture_unsafe_reason), as
// torch.optim refuses capture without capturable=True. Example:
//   auto step = [&] { opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step(); };
//   CapturedStep graphed(device, step, 3, [&] { opt.zero_grad(/*set_to_none=*/true); });
//   for (...) { x.copy_(next_batch);  graphed.replay(); }
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tipbench::suites {

class CapturedStep {
 public:
  // Runs `body` warmup_steps times on a side stream, then `before_capture` (e.g. the optimizer's
  // zero_grad(set_to_none=true), so backward allocates the gradients inside the graph's pool),
  // then captures `body` once (which does not run it). Throws c10::Error when the body cannot be
  // captured (e.g. it synchronizes).
  CapturedStep(const c10::Device& device, std::function<void()> body, int warmup_steps = 3,
               const std::function<void()>& before_capture = nullptr);
  ~CapturedStep();
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;

  void replay();  // enqueues the captured step on the current stream
  int warmup_steps() const { return warmup_steps_; }

 private:
  struct Graph;
  std::unique_ptr<Graph> graph_;
  int warmup_steps_;
};

// Why a step cannot be captured on `device` (anything but CUDA); nullopt when it can.
std::optional<std::string> cuda_graph_unavailable(const c10::Device& device);

}  // namespace tipbench::suites
