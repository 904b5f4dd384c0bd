// The streams suite's model: a ViT whose blocks are "parallel layers" (PaLM, ViT-22B), whose
// attention and MLP read the same LayerNorm output and do not depend on each other:
//   y = x + attn(ln(x)) + mlp(ln(x))
// and, optionally, the two side streams each block's branches run on. Example:
//   auto streams = std::make_shared<BranchStreams>(torch::Device(torch::kCUDA, 0));
//   ParallelViT model(models::ViTOptions::b16(), streams);   // nullptr: all on the current stream
//   model->to(torch::kCUDA);
//   auto loss = cross_entropy(model->forward(images), labels);
//   loss.backward();   // each backward op runs on the stream its forward op ran on
#pragma once

#include "tipbench/models/vit.h"

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tipbench::suites {

// Why branches cannot run on CUDA side streams on `device`; nullopt when they can.
std::optional<std::string> branch_streams_unavailable(const c10::Device& device);

// Two side streams of one CUDA device and the events that fork them from the caller's current
// stream and join them back, made once and reused by every block of every step. Written from
// PyTorch's stream semantics (torch/cuda/streams.py Stream.wait_stream, c10/cuda/CUDAStream.h,
// at::cuda::CUDAEvent; Tensor.record_stream for the caching allocator; docs/source/notes/cuda.rst,
// "CUDA streams" and "Stream semantics of backward passes"); in Python:
//   s1.wait_stream(torch.cuda.current_stream()); s2.wait_stream(torch.cuda.current_stream())
//   with torch.cuda.stream(s1): a = first(h)
//   with torch.cuda.stream(s2): b = second(h)
//   torch.cuda.current_stream().wait_stream(s1); torch.cuda.current_stream().wait_stream(s2)
//   h.record_stream(s1); h.record_stream(s2)
//   a.record_stream(torch.cuda.current_stream()); b.record_stream(torch.cuda.current_stream())
class BranchStreams {
 public:
  using Branch = std::function<torch::Tensor(const torch::Tensor&)>;

  // Throws std::invalid_argument (branch_streams_unavailable's reason) off CUDA.
  explicit BranchStreams(const c10::Device& device);
  ~BranchStreams();
  BranchStreams(const BranchStreams&) = delete;
  BranchStreams& operator=(const BranchStreams&) = delete;

  // first(input) on side stream 0 and second(input) on side stream 1, both ordered after the work
  // enqueued so far on the caller's current stream; the caller's stream then waits for both, so
  // what it enqueues next may use the outputs. Autograd records each op's stream: backward runs
  // the branches' backward ops on the same side streams, concurrently again.
  std::pair<torch::Tensor, torch::Tensor> run(const torch::Tensor& input, const Branch& first, const Branch& second);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A parallel block built from the reference ViT block's modules (models::EncoderBlock, initialised
// as torchvision's): its first LayerNorm feeds both the attention and the MLP; the reference's
// second LayerNorm and residual dropout have no place in it. With `streams`, attention and MLP
// run on the two side streams; without, one after the other on the current stream. The same
// ops either way, so the same result.
class ParallelBlockImpl : public torch::nn::Module {
 public:
  ParallelBlockImpl(const models::ViTOptions& options, std::shared_ptr<BranchStreams> streams);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::LayerNorm ln{nullptr};
  models::SelfAttention self_attention{nullptr};
  torch::nn::Sequential mlp{nullptr};  // 0 Linear, 1 GELU, 2 Dropout, 3 Linear, 4 Dropout

 private:
  std::shared_ptr<BranchStreams> streams_;
};
TORCH_MODULE(ParallelBlock);

// The reference ViT's patch embedding, class token, position embedding, final LayerNorm and head
// (a models::VisionTransformer with no encoder layers, `vit`), with options.num_layers parallel
// blocks between them. The ViT-B/16 widths give 86.55 M parameters: the reference's less one
// LayerNorm per block.
class ParallelViTImpl : public torch::nn::Module {
 public:
  explicit ParallelViTImpl(const models::ViTOptions& options, std::shared_ptr<BranchStreams> streams = nullptr);
  torch::Tensor forward(torch::Tensor images);  // head(blocks(embed(images)))

  const std::vector<ParallelBlock>& blocks() const { return blocks_; }
  bool on_branch_streams() const { return streams_ != nullptr; }

  models::VisionTransformer vit{nullptr};

 private:
  std::shared_ptr<BranchStreams> streams_;
  std::vector<ParallelBlock> blocks_;
};
TORCH_MODULE(ParallelViT);

}  // namespace tipbench::suites
