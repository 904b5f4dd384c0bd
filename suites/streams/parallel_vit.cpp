#include "parallel_vit.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include <array>
#include <stdexcept>
#include <tuple>

namespace tipbench::suites {

std::optional<std::string> branch_streams_unavailable(const c10::Device& device) {
  if (!device.is_cuda()) return "CUDA streams run kernels concurrently on a GPU; this run is on " + device.str();
  if (!torch::cuda::is_available()) return "no CUDA device here";
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
struct BranchStreams::Impl {
  c10::DeviceIndex device;
  std::array<c10::cuda::CUDAStream, 2> side;
  // Recorded on the caller's stream where the branches fork; each side stream waits for it.
  at::cuda::CUDAEvent forked;
  // Recorded on each side stream after its branch; the caller's stream waits for both. Events
  // made without timing (at::cuda::CUDAEvent's default flags), the cheapest to record and wait
  // for; re-recording one is how CUDA reuses it (a wait sees the latest record before it).
  std::array<at::cuda::CUDAEvent, 2> joined;

  explicit Impl(c10::DeviceIndex index)
      : device(index),
        side{c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index),
             c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index)} {}
};

BranchStreams::BranchStreams(const c10::Device& device) {
  if (auto why = branch_streams_unavailable(device)) throw std::invalid_argument(*why);
  const auto index = device.has_index() ? device.index() : c10::cuda::current_device();
  impl_ = std::make_unique<Impl>(index);
}

BranchStreams::~BranchStreams() = default;

std::pair<torch::Tensor, torch::Tensor> BranchStreams::run(const torch::Tensor& input, const Branch& first,
                                                           const Branch& second) {
  TORCH_CHECK(input.is_cuda() && input.get_device() == impl_->device,
              "BranchStreams of cuda:", static_cast<int>(impl_->device), " got an input on ", input.device());
  Impl& s = *impl_;
  const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(s.device);
  // Fork: a side stream starts after everything enqueued on the caller's stream so far (Python's
  // side.wait_stream(current)), `input` included.
  s.forked.record(caller);
  const std::array<const Branch*, 2> branches{&first, &second};
  std::array<torch::Tensor, 2> out;
  for (std::size_t i = 0; i < 2; ++i) {
    s.forked.block(s.side[i]);
    {
      c10::cuda::CUDAStreamGuard on_side(s.side[i]);
      out[i] = (*branches[i])(input);
    }
    // `input` was allocated on the caller's stream and is read on this side stream, now and by
    // the branch's backward (its first matmul saves it): the caching allocator must not hand its
    // memory to another tensor before this stream's work on it is done (Tensor.record_stream).
    input.record_stream(s.side[i]);
    s.joined[i].record(s.side[i]);
  }
  // Join: the caller's stream waits for both branches (current.wait_stream(side)) without the
  // host waiting. The outputs were allocated on the side streams and are read on the caller's:
  // record that use too. Loss and backward() then run on the caller's stream, the one the
  // forward ended on, as "Stream semantics of backward passes" asks; autograd runs each backward
  // op on its forward op's stream, syncs the streams where gradients cross them, and syncs the
  // streams that produced the parameters' gradients with the caller's stream before backward()
  // returns, so the optimizer step on the caller's stream reads finished gradients.
  for (std::size_t i = 0; i < 2; ++i) {
    s.joined[i].block(caller);
    out[i].record_stream(caller);
  }
  return {out[0], out[1]};
}

// ---------------------------------------------------------------------------------------------
ParallelBlockImpl::ParallelBlockImpl(const models::ViTOptions& o, std::shared_ptr<BranchStreams> streams)
    : streams_(std::move(streams)) {
  models::EncoderBlock reference(o.hidden_dim, o.num_heads, o.mlp_dim, o.dropout, o.attention_dropout);
  ln = register_module("ln", reference->ln_1);
  self_attention = register_module("self_attention", reference->self_attention);
  mlp = register_module("mlp", reference->mlp);
}

torch::Tensor ParallelBlockImpl::forward(torch::Tensor x) {
  const torch::Tensor h = ln(x);
  torch::Tensor attended, transformed;
  if (streams_) {
    std::tie(attended, transformed) = streams_->run(
        h, [this](const torch::Tensor& t) { return self_attention(t); },
        [this](const torch::Tensor& t) { return mlp->forward(t); });
  } else {
    attended = self_attention(h);
    transformed = mlp->forward(h);
  }
  return x + attended + transformed;  // (x + attn) + mlp in both forms: the same rounding
}

// ---------------------------------------------------------------------------------------------
ParallelViTImpl::ParallelViTImpl(const models::ViTOptions& options, std::shared_ptr<BranchStreams> streams)
    : streams_(std::move(streams)) {
  models::ViTOptions ends = options;
  ends.num_layers = 0;
  vit = register_module("vit", models::VisionTransformer(ends));
  for (int64_t i = 0; i < options.num_layers; ++i) {
    blocks_.push_back(register_module("block_" + std::to_string(i), ParallelBlock(options, streams_)));
  }
}

torch::Tensor ParallelViTImpl::forward(torch::Tensor images) {
  torch::Tensor x = vit->embed(std::move(images));
  for (auto& block : blocks_) x = block->forward(x);
  return vit->head(std::move(x));
}

}  // namespace tipbench::suites
