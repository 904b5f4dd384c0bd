#include "distributed/bucket_reducer.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <stdexcept>

namespace tipbench::distributed {

BucketReducer::BucketReducer(std::vector<torch::Tensor> parameters, c10d::Backend& group, int world_size,
                             BucketOptions options)
    : group_(group), world_size_(world_size), options_(options) {
  for (auto& p : parameters) {
    if (p.requires_grad()) parameters_.push_back(p);
  }
  const auto cap = static_cast<std::int64_t>(options_.bucket_mb * 1024 * 1024);
  bucket_of_.assign(parameters_.size(), -1);
  std::int64_t bytes = 0;
  for (int i = static_cast<int>(parameters_.size()) - 1; i >= 0; --i) {
    const auto& p = parameters_[i];
    const std::int64_t size = p.numel() * static_cast<std::int64_t>(p.element_size());
    const bool same_kind = !buckets_.empty() &&
                           parameters_[buckets_.back().members.front()].scalar_type() == p.scalar_type() &&
                           parameters_[buckets_.back().members.front()].device() == p.device();
    if (buckets_.empty() || !same_kind || (bytes > 0 && bytes + size > cap)) {
      buckets_.emplace_back();
      bytes = 0;
    }
    Bucket& b = buckets_.back();
    b.offsets.push_back(b.members.empty() ? 0 : b.offsets.back() + parameters_[b.members.back()].numel());
    b.members.push_back(i);
    bucket_of_[i] = static_cast<int>(buckets_.size()) - 1;
    bytes += size;
  }
  for (auto& b : buckets_) {
    const auto& last = parameters_[b.members.back()];
    b.flat = torch::zeros({b.offsets.back() + last.numel()}, last.options().requires_grad(false));
  }
  for (int i = 0; i < static_cast<int>(parameters_.size()); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(parameters_[i]);
    // Runs after the gradient has been accumulated into .grad(), on the backward thread.
    accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          on_gradient_ready(i);
          return outputs;
        }));
    accumulators_.push_back(std::move(accumulator));
  }
}

std::int64_t BucketReducer::gradient_bytes() const {
  std::int64_t total = 0;
  for (const auto& b : buckets_) total += b.flat.numel() * static_cast<std::int64_t>(b.flat.element_size());
  return total;
}

void BucketReducer::on_gradient_ready(int parameter) {
  if (!options_.overlap) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Bucket& b = buckets_[bucket_of_[parameter]];
  if (++b.ready == static_cast<int>(b.members.size())) launch(b);
}

void BucketReducer::launch(Bucket& b) {
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < b.members.size(); ++k) {
    const auto& p = parameters_[b.members[k]];
    auto view = b.flat.narrow(0, b.offsets[k], p.numel());
    const auto& grad = p.grad();
    if (grad.defined()) {
      view.copy_(grad.reshape({-1}));
    } else {
      view.zero_();  // a parameter unused in this step contributes nothing
    }
  }
  std::vector<at::Tensor> tensors{b.flat};
  b.work = group_.allreduce(tensors);
}

void BucketReducer::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& b : buckets_) {
      if (!b.work) launch(b);
    }
  }
  torch::NoGradGuard no_grad;
  for (auto& b : buckets_) {
    auto work = std::move(b.work);
    b.work.reset();
    b.ready = 0;
    work->wait();
    b.flat.div_(world_size_);
    for (std::size_t k = 0; k < b.members.size(); ++k) {
      auto& p = parameters_[b.members[k]];
      auto averaged = b.flat.narrow(0, b.offsets[k], p.numel()).view_as(p);
      if (p.grad().defined()) {
        p.mutable_grad().copy_(averaged);
      } else {
        p.mutable_grad() = averaged.clone();
      }
    }
  }
}

}  // namespace tipbench::distributed
