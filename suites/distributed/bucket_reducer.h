// DistributedDataParallel's gradient synchronisation, which LibTorch has no class for: gradients
// are flattened into buckets of about `bucket_mb` (parameters in reverse order, which is roughly
// the order backward produces their gradients), and with `overlap` a bucket's all-reduce starts
// from the autograd hook of its last gradient, while backward is still computing the rest.
// Without overlap every all-reduce starts after backward (what overlap buys is the difference).
// Example:
//   BucketReducer reducer(model->parameters(), session.gradients(), world, {.bucket_mb = 25});
//   loss.backward();          // hooks launch full buckets
//   reducer.finish();         // the rest, wait, averaged gradients back in .grad()
//   optimizer.step();
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace tipbench::distributed {

struct BucketOptions {
  double bucket_mb = 25;  // PyTorch DDP's bucket_cap_mb default
  bool overlap = true;
};

class BucketReducer {
 public:
  BucketReducer(std::vector<torch::Tensor> parameters, c10d::Backend& group, int world_size,
                BucketOptions options);
  // Launches what backward has not, waits for every all-reduce and writes the average of the
  // ranks' gradients into each parameter's .grad(). Rethrows a failed collective.
  void finish();

  int bucket_count() const { return static_cast<int>(buckets_.size()); }
  std::int64_t gradient_bytes() const;

 private:
  struct Bucket {
    std::vector<int> members;  // indices into parameters_
    std::vector<std::int64_t> offsets;
    torch::Tensor flat;
    int ready = 0;
    c10::intrusive_ptr<c10d::Work> work;
  };
  void on_gradient_ready(int parameter);
  void launch(Bucket& bucket);

  std::vector<torch::Tensor> parameters_;
  c10d::Backend& group_;
  int world_size_;
  BucketOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_of_;  // parameter index -> bucket index
  // AccumulateGrad nodes are held weakly by their tensors; holding them keeps the hooks alive.
  // Their handle is std::shared_ptr<Node> up to LibTorch 2.14, c10::intrusive_ptr<Node> from 2.15.
  using AccumulatorHandle = decltype(torch::autograd::impl::grad_accumulator(std::declval<const torch::Tensor&>()));
  std::vector<AccumulatorHandle> accumulators_;
  std::mutex mutex_;
};

}  // namespace tipbench::distributed
