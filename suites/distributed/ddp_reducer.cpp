#include "distributed/ddp_reducer.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace tipbench::distributed {

namespace {

// distributed.py: self.broadcast_bucket_size = int(250 * 1024 * 1024)
constexpr std::size_t kBroadcastBucketBytes = 250 * 1024 * 1024;

std::int64_t megabytes_to_bytes(double mb) { return static_cast<std::int64_t>(mb * 1024 * 1024); }

}  // namespace

DdpReducer::DdpReducer(torch::nn::Module& module, c10::intrusive_ptr<c10d::ProcessGroup> group, DdpOptions options)
    : group_(std::move(group)), options_(options) {
  // _build_params_for_reducer: the parameters that require a gradient (the reference models
  // share none, so there is nothing to deduplicate).
  for (auto& p : module.parameters()) {
    if (p.requires_grad()) parameters_.push_back(p);
  }
  if (parameters_.empty())
    throw std::invalid_argument("DdpReducer: the module has no parameter that requires a gradient");
  buffers_ = module.buffers();
  // bucket_cap_mb: None -> 25 MB with bucket_bytes_cap_default (a first bucket of
  // dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB); a value -> every bucket, the first included.
  // No overlap: one bucket whatever the size.
  constexpr auto kUnbounded = std::numeric_limits<std::int64_t>::max();
  bucket_bytes_cap_ = !options_.overlap    ? kUnbounded
                      : options_.bucket_mb ? megabytes_to_bytes(*options_.bucket_mb)
                                           : c10d::kDefaultBucketBytesCap;
  first_bucket_bytes_cap_ =
      !options_.overlap || options_.bucket_mb ? bucket_bytes_cap_ : c10d::kDefaultFirstBucketBytes;

  torch::NoGradGuard no_grad;
  // __init__ with init_sync=True: the same parameter shapes on every rank, then every rank starts
  // from rank 0's parameters and buffers.
  c10d::verify_params_across_processes(group_, parameters_, std::nullopt);
  std::vector<at::Tensor> states;
  for (const auto& p : parameters_) states.push_back(p.detach());
  if (options_.broadcast_buffers) {
    for (const auto& b : buffers_) states.push_back(b.detach());
  }
  c10d::broadcast_coalesced(group_, states, kBroadcastBucketBytes, /*rank=*/0);

  // _ddp_init_helper, find_unused_parameters=False: bucket_size_limits = [sys.maxsize] (one bucket
  // until the first backward shows the real gradient order), the buckets reversed.
  const std::vector<bool> expect_sparse(parameters_.size(), false);
  auto [bucket_indices, per_bucket_limits] =
      c10d::compute_bucket_assignment_by_size(parameters_, {std::numeric_limits<std::size_t>::max()}, expect_sparse);
  std::reverse(bucket_indices.begin(), bucket_indices.end());
  reducer_ = std::make_unique<c10d::Reducer>(
      parameters_, std::move(bucket_indices), group_, expect_sparse, bucket_bytes_cap_,
      /*find_unused_parameters=*/false,
      /*gradient_as_bucket_view=*/false,
      /*param_names=*/std::unordered_map<std::size_t, std::string>{}, first_bucket_bytes_cap_,
      /*skip_all_reduce_unused_params=*/false,
      /*use_python_reducer=*/false,
      /*bucket_bytes_cap_list=*/std::vector<std::int64_t>{});

  // Registered after the Reducer's own hooks, so they run after them (post hooks run in order).
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(parameters_[i]);
    const auto key = accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          on_gradient(i);
          return outputs;
        }));
    hooks_.emplace_back(std::move(accumulator), key);
  }
}

DdpReducer::~DdpReducer() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
}

void DdpReducer::before_forward() {
  reducer_->prepare_for_forward();
  reducer_->rebuild_buckets();  // once, before the second forward
  if (options_.broadcast_buffers && !buffers_.empty()) {
    // _sync_buffers -> _default_broadcast_coalesced(self.modules_buffers, broadcast_bucket_size, 0)
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> buffers;
    for (const auto& b : buffers_) buffers.push_back(b.detach());
    c10d::broadcast_coalesced(group_, buffers, kBroadcastBucketBytes, /*rank=*/0);
  }
}

void DdpReducer::after_forward() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    arrived_.clear();
  }
  reducer_->prepare_for_backward({});  // find_unused_parameters=False: no graph search
}

void DdpReducer::on_gradient(std::size_t index) {
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    arrived_.push_back(index);
    if (arrived_.size() == parameters_.size()) {
      last_order_ = arrived_;
      last = true;
    }
  }
  if (last && on_last_gradient_) on_last_gradient_();
}

std::vector<std::vector<std::size_t>> DdpReducer::buckets() const {
  std::unordered_map<const c10::TensorImpl*, std::size_t> index_of;
  for (std::size_t i = 0; i < parameters_.size(); ++i) index_of[parameters_[i].unsafeGetTensorImpl()] = i;
  std::vector<std::vector<std::size_t>> out;
  for (const auto& bucket : reducer_->get_grad_buckets(/*return_zero_tensors=*/true)) {
    std::vector<std::size_t> members;
    for (const auto& p : bucket.getParameters()) members.push_back(index_of.at(p.unsafeGetTensorImpl()));
    out.push_back(std::move(members));
  }
  return out;
}

std::vector<std::size_t> DdpReducer::gradient_order() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_order_;
}

std::int64_t DdpReducer::gradient_bytes() const {
  std::int64_t total = 0;
  for (const auto& p : parameters_) total += p.numel() * static_cast<std::int64_t>(p.element_size());
  return total;
}

std::vector<std::size_t> DdpReducer::bucket_size_limits() const {
  // Reducer::rebuild_buckets with an empty bucket_bytes_cap_list.
  return {static_cast<std::size_t>(first_bucket_bytes_cap_), static_cast<std::size_t>(bucket_bytes_cap_)};
}

}  // namespace tipbench::distributed
