// PyTorch's DistributedDataParallel gradient synchronisation, driven from C++: the c10d::Reducer
// that torch.nn.parallel.DistributedDataParallel builds and calls, with DDP's defaults, so the
// `ddp` arms measure PyTorch's DDP and not a copy of it. LibTorch ships the Reducer
// (torch/csrc/distributed/c10d/reducer.hpp, exported by libtorch_cpu) but no C++ module around
// it; this class does what that Python module does around it (torch/nn/parallel/distributed.py):
//   construction    _verify_param_shape_across_processes, then _sync_module_states (parameters
//                   and buffers broadcast from rank 0 in 250 MiB buckets), then the Reducer with
//                   one bucket of every gradient until the first backward has run
//                   (find_unused_parameters=False), gradient_as_bucket_view=False.
//   before_forward  _pre_forward: prepare_for_forward; rebuild_buckets (once, after the first
//                   backward: buckets in gradient-arrival order, the first of 1 MiB then 25 MiB,
//                   compute_bucket_assignment_by_size, rank 0's assignment broadcast); the buffers
//                   broadcast from rank 0 (broadcast_buffers=True).
//   after_forward   _post_forward: prepare_for_backward({}).
// Backward then copies each gradient into its bucket (divided by the world size) from the
// gradient-accumulator hooks, launches each bucket's all-reduce as soon as it and every bucket
// before it is full (bucket order, which keeps the ranks' collectives in one sequence), and the
// reducer's final callback waits for them and writes the averages into .grad(): when
// loss.backward() returns, the gradients are averaged over the ranks. Example:
//   DdpReducer ddp(*module, session.gradient_group(), {});
//   ddp.before_forward();  auto out = model.forward(x);  ddp.after_forward();
//   loss_fn(out, y).backward();
//   optimizer.step();
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/torch.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace c10d {
class Reducer;
}

namespace tipbench::distributed {

struct DdpOptions {
  // false: one bucket of every gradient, all-reduced when backward has produced the last one
  // (DDP with an unbounded bucket_cap_mb: the all-reduce cannot overlap backward).
  bool overlap = true;
  // DDP's bucket_cap_mb. nullopt: DDP's default, 25 MB and a first bucket of 1 MB; when set, every
  // bucket (the first too) holds up to it, as in DDP.
  std::optional<double> bucket_mb;
  bool broadcast_buffers = true;  // DDP's default: rank 0's buffers before every forward
};

class DdpReducer {
 public:
  // `module`'s parameters and buffers must be on the device `group` reduces on.
  DdpReducer(torch::nn::Module& module, c10::intrusive_ptr<c10d::ProcessGroup> group, DdpOptions options);
  ~DdpReducer();
  DdpReducer(const DdpReducer&) = delete;
  DdpReducer& operator=(const DdpReducer&) = delete;

  void before_forward();
  void after_forward();

  // Runs on the thread that runs backward once the step's last gradient has been accumulated:
  // backward's compute is done, the all-reduces may still be in flight.
  void on_last_gradient(std::function<void()> callback) { on_last_gradient_ = std::move(callback); }

  // The buckets, as indices into the parameters (those of module.parameters() that require a
  // gradient), in the order they are all-reduced.
  std::vector<std::vector<std::size_t>> buckets() const;
  // The parameter indices in the order their gradients were ready in the last backward.
  std::vector<std::size_t> gradient_order() const;
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }
  std::int64_t gradient_bytes() const;
  // The limits compute_bucket_assignment_by_size was given when the buckets were rebuilt.
  std::vector<std::size_t> bucket_size_limits() const;

 private:
  void on_gradient(std::size_t index);

  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  DdpOptions options_;
  std::vector<torch::Tensor> parameters_;
  std::vector<torch::Tensor> buffers_;
  std::int64_t bucket_bytes_cap_;
  std::int64_t first_bucket_bytes_cap_;
  std::unique_ptr<c10d::Reducer> reducer_;
  // Our own post hooks on the gradient accumulators (after the Reducer's): the arrival order
  // and the last gradient. Their handle is std::shared_ptr<Node> up to LibTorch 2.14,
  // c10::intrusive_ptr<Node> from 2.15.
  using AccumulatorHandle = decltype(torch::autograd::impl::grad_accumulator(std::declval<const torch::Tensor&>()));
  std::vector<std::pair<AccumulatorHandle, std::uintptr_t>> hooks_;
  mutable std::mutex mutex_;
  std::vector<std::size_t> arrived_, last_order_;
  std::function<void()> on_last_gradient_;
};

}  // namespace tipbench::distributed
