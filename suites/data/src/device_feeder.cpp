#include "tipbench/data/device_feeder.h"

#include "tipbench/data/device_augment.h"
#include "tipbench/data/nvjpeg_decoder.h"

#include <c10/cuda/CUDAGuard.h>

#include <chrono>
#include <span>
#include <stdexcept>

namespace tipbench::data {

namespace {
// Events a batch in flight holds: its copy's start and end, and its ready event. A few batches
// are in flight at once (one staged, the ones the device still computes on).
constexpr int kReservedEvents = 3 * 8;
}  // namespace

DeviceFeeder::DeviceFeeder(Loader& loader, c10::Device device, bool pinned)
    : loader_(loader), device_(device), pinned_(pinned) {
  if (pinned_ && !device_.is_cuda()) throw std::invalid_argument("DeviceFeeder: the pinned path needs a CUDA device");
  if (pinned_) side_stream_ = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device_.index());
  if (device_.is_cuda()) events_ = std::make_unique<CudaEventPool>(device_.index(), kReservedEvents);
  if (loader_.options().decode_on_device) decoder_ = std::make_unique<NvjpegDecoder>(device_);
}

DeviceFeeder::~DeviceFeeder() {
  // The device may still read the last batches' bytes (the staged one's too): wait before freeing them.
  for (auto& f : in_flight_) f.done->synchronize();
  if (staged_ && staged_->copied) staged_->copied->synchronize();
}

void DeviceFeeder::prefetch() {
  release_finished();
  Staged staged;
  const auto t0 = std::chrono::steady_clock::now();
  staged.host = loader_.next();
  wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++batches_;
  skipped_corrupt_ += staged.host.skipped_corrupt;
  skipped_missing_ += staged.host.skipped_missing;
  copy_to_device(staged);
  skipped_corrupt_ += staged.rejected;
  staged_ = std::move(staged);
}

void DeviceFeeder::copy_to_device(Staged& staged) {
  if (!device_.is_cuda()) {
    staged.images = staged.host.images;
    staged.labels = staged.host.labels;
    return;
  }
  CopyTiming timing{events_->take(), events_->take(), true};
  // Pinned: allocated and written on the side stream; take() hands the tensors to the current
  // stream. Pageable (PyTorch's default loop): a synchronous copy on the current stream.
  const auto stream = pinned_ ? *side_stream_ : c10::cuda::getCurrentCUDAStream(device_.index());
  c10::cuda::CUDAStreamGuard guard(stream);
  timing.start->record(stream);
  if (decoder_) {
    try {
      decode_on_device(staged);
    } catch (...) {  // InputError under --corrupt-policy fail: the device may still read the bytes
      stream.synchronize();
      throw;
    }
  } else {
    staged.images = staged.host.images.to(device_, /*non_blocking=*/pinned_);
    staged.labels = staged.host.labels.to(device_, /*non_blocking=*/pinned_);
  }
  timing.end->record(stream);
  if (pinned_ || decoder_) {
    staged.copied = events_->take();
    staged.copied->record(stream);
  }
  copies_.push_back(std::move(timing));
}

void DeviceFeeder::decode_on_device(Staged& staged) {
  const HostBatch& host = staged.host;
  std::vector<std::span<const std::uint8_t>> files;
  files.reserve(host.encoded.size());
  for (const auto& f : host.encoded) files.emplace_back(f.bytes);
  const auto decoded = decoder_->decode(files);
  const std::int64_t side = loader_.options().augment.output_size;
  torch::Tensor images = torch::empty({static_cast<std::int64_t>(files.size()), 3, side, side},
                                      torch::TensorOptions().dtype(torch::kByte).device(device_));
  std::vector<std::int64_t> kept;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    if (!decoded[i].image.defined()) {
      // Throws InputError under --corrupt-policy fail; else the file is counted and left out.
      loader_.reject(host.indices[i], "cannot decode on the device: " + decoded[i].error);
      ++staged.rejected;
      continue;
    }
    crop_resize_flip_into(decoded[i].image, host.encoded[i].box, images[static_cast<std::int64_t>(kept.size())]);
    kept.push_back(static_cast<std::int64_t>(i));
  }
  staged.images = images.narrow(0, 0, static_cast<std::int64_t>(kept.size()));
  torch::Tensor labels = host.labels;
  if (kept.size() < decoded.size()) labels = labels.index_select(0, torch::tensor(kept, torch::kLong));
  staged.labels = labels.to(device_, /*non_blocking=*/pinned_);
}

void DeviceFeeder::release_finished() {
  while (!in_flight_.empty() && in_flight_.front().done->query()) {
    events_->give_back(std::move(in_flight_.front().done));
    in_flight_.pop_front();
  }
  read_back_copies(/*wait=*/false);
}

void DeviceFeeder::read_back_copies(bool wait) const {
  while (!copies_.empty()) {
    CopyTiming& c = copies_.front();
    if (wait) {
      c.end->synchronize();
    } else if (!c.end->query()) {
      break;  // copies complete in order on their stream
    }
    if (c.counted) {
      copy_ms_total_ += c.start->elapsed_time(*c.end);
      ++copies_read_;
    }
    events_->give_back(std::move(c.start));
    events_->give_back(std::move(c.end));
    copies_.pop_front();
  }
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
  DeviceBatch batch{staged.images, staged.labels, staged.host.rows() - staged.rejected,
                    staged.host.skipped_corrupt + staged.host.skipped_missing + staged.rejected};
  if (decoder_) {
    in_flight_.push_back({std::move(staged.host), std::move(staged.copied)});
  } else if (staged.copied) {
    events_->give_back(std::move(staged.copied));  // the current stream's wait is already enqueued
  }
  return batch;
}

void DeviceFeeder::reset_counters() {
  wait_s_ = 0;
  batches_ = skipped_corrupt_ = skipped_missing_ = 0;
  if (!events_) return;
  // The warm-up's copies are not counted; a copy still in flight gives its events back when read.
  read_back_copies(/*wait=*/false);
  for (auto& c : copies_) c.counted = false;
  copy_ms_total_ = 0;
  copies_read_ = 0;
}

std::optional<double> DeviceFeeder::mean_copy_ms() const {
  if (!device_.is_cuda()) return std::nullopt;
  read_back_copies(/*wait=*/true);
  if (copies_read_ == 0) return std::nullopt;
  return copy_ms_total_ / static_cast<double>(copies_read_);
}

std::string DeviceFeeder::copy_mode() const {
  if (!device_.is_cuda()) return "none";
  if (decoder_) {
    return pinned_ ? "nvJPEG decode, crop and resize on a side stream, one batch ahead"
                   : "nvJPEG decode, crop and resize on the current stream";
  }
  return pinned_ ? "non_blocking on a side stream, one batch ahead" : "blocking on the current stream";
}

std::string DeviceFeeder::decode_backend() const { return decoder_ ? decoder_->backend() : std::string(); }

}  // namespace tipbench::data
