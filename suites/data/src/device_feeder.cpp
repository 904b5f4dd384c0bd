#include "tipbench/data/device_feeder.h"

#include <c10/cuda/CUDAGuard.h>

#include <chrono>
#include <stdexcept>

namespace tipbench::data {

DeviceFeeder::DeviceFeeder(Loader& loader, c10::Device device, bool pinned)
    : loader_(loader), device_(device), pinned_(pinned) {
  if (pinned_ && !device_.is_cuda()) throw std::invalid_argument("DeviceFeeder: the pinned path needs a CUDA device");
  if (pinned_) side_stream_ = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device_.index());
}

void DeviceFeeder::prefetch() {
  Staged staged;
  const auto t0 = std::chrono::steady_clock::now();
  staged.host = loader_.next();
  wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++batches_;
  skipped_corrupt_ += staged.host.skipped_corrupt;
  skipped_missing_ += staged.host.skipped_missing;
  copy_to_device(staged);
  staged_ = std::move(staged);
}

void DeviceFeeder::copy_to_device(Staged& staged) {
  if (!device_.is_cuda()) {
    staged.images = staged.host.images;
    staged.labels = staged.host.labels;
    return;
  }
  auto timing = std::make_unique<CopyTiming>();
  if (!pinned_) {
    // PyTorch's default loop: a synchronous copy from pageable memory on the current stream.
    const auto stream = c10::cuda::getCurrentCUDAStream(device_.index());
    timing->start.record(stream);
    staged.images = staged.host.images.to(device_);
    staged.labels = staged.host.labels.to(device_);
    timing->end.record(stream);
  } else {
    // Allocated and written on the side stream; take() hands them to the current stream.
    c10::cuda::CUDAStreamGuard guard(*side_stream_);
    timing->start.record(*side_stream_);
    staged.images = staged.host.images.to(device_, /*non_blocking=*/true);
    staged.labels = staged.host.labels.to(device_, /*non_blocking=*/true);
    timing->end.record(*side_stream_);
    staged.copied = std::make_unique<at::cuda::CUDAEvent>();
    staged.copied->record(*side_stream_);
  }
  copies_.push_back(std::move(timing));
}

DeviceBatch DeviceFeeder::take() {
  if (!staged_) prefetch();
  Staged staged = std::move(*staged_);
  staged_.reset();
  if (staged.copied) {
    const auto current = c10::cuda::getCurrentCUDAStream(device_.index());
    staged.copied->block(current);  // the compute waits for the copy, the host does not
    staged.images.record_stream(current);
    staged.labels.record_stream(current);
  }
  return {staged.images, staged.labels, staged.host.rows(),
          staged.host.skipped_corrupt + staged.host.skipped_missing};
}

void DeviceFeeder::reset_counters() {
  wait_s_ = 0;
  batches_ = skipped_corrupt_ = skipped_missing_ = 0;
  copies_.clear();
}

std::optional<double> DeviceFeeder::mean_copy_ms() const {
  if (!device_.is_cuda() || copies_.empty()) return std::nullopt;
  copies_.back()->end.synchronize();  // events complete in order on their stream
  double total = 0;
  for (const auto& c : copies_) total += c->start.elapsed_time(c->end);
  return total / static_cast<double>(copies_.size());
}

std::string DeviceFeeder::copy_mode() const {
  if (!device_.is_cuda()) return "none";
  return pinned_ ? "non_blocking on a side stream, one batch ahead" : "blocking on the current stream";
}

}  // namespace tipbench::data
