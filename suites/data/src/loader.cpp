#include "tipbench/data/loader.h"

#include "files.h"
#include "tipbench/data/jpeg.h"
#include "tipbench/data/rng.h"
#include "tipbench/results/result.h"  // InputError

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

namespace tipbench::data {

namespace {

constexpr std::size_t kBadFilesKept = 100;

std::int64_t batches_per_epoch_of(std::int64_t samples, const LoaderOptions& o) {
  if (o.batch_size <= 0) throw std::invalid_argument("Loader: batch_size must be positive");
  if (o.workers < 0 || o.prefetch_factor < 1) throw std::invalid_argument("Loader: workers >= 0, prefetch_factor >= 1");
  const std::int64_t n = o.drop_last ? samples / o.batch_size : (samples + o.batch_size - 1) / o.batch_size;
  if (n == 0) {
    throw std::invalid_argument(
        fmt::format("Loader: the dataset has {} images, fewer than one batch of {}", samples, o.batch_size));
  }
  return n;
}

}  // namespace

Loader::Loader(Manifest manifest, std::string root, LoaderOptions options)
    : manifest_(std::move(manifest)),
      root_(std::move(root)),
      options_(options),
      batches_per_epoch_(batches_per_epoch_of(static_cast<std::int64_t>(manifest_.files.size()), options)),
      depth_(options.workers * options.prefetch_factor) {
  if (options_.cache_decoded) cache_.resize(manifest_.files.size());
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

Loader::~Loader() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stopping_.store(true);
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

std::int64_t Loader::batch_bytes() const {
  const auto label_bytes = static_cast<std::int64_t>(sizeof(std::int64_t));
  if (options_.decode_on_device) {
    const auto files = static_cast<std::int64_t>(manifest_.files.size());
    return options_.batch_size * (manifest_.total_bytes() / std::max<std::int64_t>(files, 1) + label_bytes);
  }
  const std::int64_t side = options_.augment.output_size;
  const std::int64_t pixel_bytes = options_.uint8_batches ? 1 : static_cast<std::int64_t>(sizeof(float));
  return options_.batch_size * (3 * side * side * pixel_bytes + label_bytes);
}

int Loader::ready_batches() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(ready_.size());
}

std::vector<BadFile> Loader::bad_files() const {
  std::lock_guard lock(bad_mutex_);
  return bad_files_;
}

HostBatch Loader::next() {
  if (workers_.empty()) return make_batch(consumed_++, inline_scratch_);
  std::unique_lock lock(mutex_);
  ready_cv_.wait(lock, [&] { return ready_.count(consumed_) > 0; });
  auto node = ready_.extract(consumed_);
  ++consumed_;
  lock.unlock();
  work_cv_.notify_all();  // a slot is free: a worker may claim the next sequence number
  if (node.mapped().error) std::rethrow_exception(node.mapped().error);
  return std::move(node.mapped().batch);
}

void Loader::worker_loop() {
  Scratch scratch;
  while (true) {
    std::int64_t sequence = 0;
    {
      std::unique_lock lock(mutex_);
      // At most depth_ batches claimed ahead of the consumer: made, being made, or waiting.
      work_cv_.wait(lock, [&] { return stop_ || next_to_claim_ < consumed_ + depth_; });
      if (stop_) return;
      sequence = next_to_claim_++;
    }
    Slot slot;
    try {
      slot.batch = make_batch(sequence, scratch);
    } catch (...) {
      slot.error = std::current_exception();
    }
    if (stopping_.load()) return;
    {
      std::lock_guard lock(mutex_);
      ready_.emplace(sequence, std::move(slot));
    }
    ready_cv_.notify_all();
  }
}

std::shared_ptr<const std::vector<std::int64_t>> Loader::permutation(std::int64_t epoch) {
  std::lock_guard lock(permutation_mutex_);
  for (const auto& [e, p] : permutations_) {
    if (e == epoch) return p;
  }
  auto order = std::make_shared<std::vector<std::int64_t>>(manifest_.files.size());
  std::iota(order->begin(), order->end(), 0);
  if (options_.shuffle) {  // Fisher-Yates, keyed by (seed, epoch): the same order for any worker count
    Rng rng = Rng::keyed({options_.seed, static_cast<std::uint64_t>(epoch), 0x5eed});
    for (std::size_t i = order->size(); i > 1; --i)
      std::swap((*order)[i - 1], (*order)[rng.below(static_cast<std::int64_t>(i))]);
  }
  // Batches of two neighbouring epochs are in flight at an epoch boundary: keep two.
  if (permutations_.size() == 2) permutations_.erase(permutations_.begin());
  permutations_.emplace_back(epoch, order);
  return order;
}

void Loader::reject(std::int64_t index, const std::string& reason) {
  skip(manifest_.files.at(static_cast<std::size_t>(index)), reason);
}

void Loader::skip(const ManifestEntry& entry, const std::string& reason) {
  if (options_.corrupt_policy == CorruptPolicy::fail) {
    throw InputError(fmt::format("{}/{}: {} (--corrupt-policy fail stops here; skip leaves such files out)", root_,
                                 entry.path, reason));
  }
  skipped_total_.fetch_add(1);
  std::lock_guard lock(bad_mutex_);
  if (bad_paths_.insert(entry.path).second && bad_files_.size() < kBadFilesKept) {
    bad_files_.push_back({entry.path, reason});
  }
}

HostBatch Loader::make_batch(std::int64_t sequence, Scratch& scratch) {
  const std::int64_t epoch = sequence / batches_per_epoch_;
  const std::int64_t first = (sequence % batches_per_epoch_) * options_.batch_size;
  const auto order = permutation(epoch);
  const std::int64_t count =
      std::min<std::int64_t>(options_.batch_size, static_cast<std::int64_t>(order->size()) - first);
  const std::int64_t side = options_.augment.output_size;
  const std::int64_t plane = 3 * side * side;

  HostBatch batch;
  batch.sequence = sequence;
  batch.epoch = epoch;
  const auto pinned = torch::TensorOptions().pinned_memory(options_.pin_memory);
  if (!options_.decode_on_device) {
    batch.images =
        torch::empty({count, 3, side, side}, pinned.dtype(options_.uint8_batches ? torch::kByte : torch::kFloat));
  }
  batch.labels = torch::empty({count}, pinned.dtype(torch::kLong));
  std::int64_t* labels = batch.labels.data_ptr<std::int64_t>();
  for (std::int64_t k = first; k < first + count; ++k) {
    if (stopping_.load(std::memory_order_relaxed)) break;  // the loader is shutting down
    const std::int64_t index = (*order)[k];
    if (options_.decode_on_device) {
      if (!add_encoded(index, epoch, batch)) continue;
      labels[batch.rows()] = manifest_.files[static_cast<std::size_t>(index)].label;
      batch.indices.push_back(index);
      continue;
    }
    std::shared_ptr<const RgbImage> hold;
    const RgbImage* image = decoded(index, scratch, batch, hold);
    if (image == nullptr) continue;
    const CropBox box = crop_box(index, epoch, image->width, image->height);
    const std::int64_t row = batch.rows();
    if (options_.uint8_batches) {
      crop_resize_u8(*image, box, options_.augment, batch.images.data_ptr<std::uint8_t>() + row * plane,
                     scratch.resize);
    } else {
      crop_resize_normalize(*image, box, options_.augment, batch.images.data_ptr<float>() + row * plane,
                            scratch.resize);
    }
    labels[row] = manifest_.files[static_cast<std::size_t>(index)].label;
    batch.indices.push_back(index);
  }
  if (batch.rows() < count) {  // skipped files: the batch shrinks (the storage stays pinned)
    if (batch.images.defined()) batch.images = batch.images.narrow(0, 0, batch.rows());
    batch.labels = batch.labels.narrow(0, 0, batch.rows());
  }
  return batch;
}

CropBox Loader::crop_box(std::int64_t index, std::int64_t epoch, int width, int height) const {
  Rng rng = Rng::keyed({options_.seed, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(index), 0xa0a0});
  return random_resized_crop(width, height, options_.augment, rng);
}

bool Loader::add_encoded(std::int64_t index, std::int64_t epoch, HostBatch& batch) {
  const ManifestEntry& entry = manifest_.files[static_cast<std::size_t>(index)];
  EncodedImage file;
  std::string error;
  if (!detail::read_file(root_ + "/" + entry.path, file.bytes, error)) {
    skip(entry, "cannot read: " + error);
    ++batch.skipped_missing;
    return false;
  }
  JpegHeader header;
  if (!inspect_jpeg(file.bytes, header, error)) {
    skip(entry, "cannot decode: " + error);
    ++batch.skipped_corrupt;
    return false;
  }
  file.width = header.width;
  file.height = header.height;
  file.box = crop_box(index, epoch, header.width, header.height);
  batch.encoded.push_back(std::move(file));
  return true;
}

const RgbImage* Loader::decoded(std::int64_t index, Scratch& scratch, HostBatch& batch,
                                std::shared_ptr<const RgbImage>& hold) {
  if (options_.cache_decoded) {
    std::lock_guard lock(cache_mutex_);
    hold = cache_[static_cast<std::size_t>(index)];
  }
  if (hold) {
    cache_hits_.fetch_add(1, std::memory_order_relaxed);
    return hold.get();
  }
  const ManifestEntry& entry = manifest_.files[static_cast<std::size_t>(index)];
  std::string error;
  if (!detail::read_file(root_ + "/" + entry.path, scratch.file, error)) {
    skip(entry, "cannot read: " + error);
    ++batch.skipped_missing;
    return nullptr;
  }
  if (!decode_jpeg(scratch.file, scratch.image, error)) {
    skip(entry, "cannot decode: " + error);  // never cached: every epoch skips and counts it again
    ++batch.skipped_corrupt;
    return nullptr;
  }
  if (options_.cache_decoded) {
    auto copy = std::make_shared<const RgbImage>(scratch.image);
    std::lock_guard lock(cache_mutex_);
    auto& slot = cache_[static_cast<std::size_t>(index)];
    if (!slot) {  // two workers may decode one image at an epoch boundary: keep and count one
      slot = std::move(copy);
      cached_bytes_.fetch_add(static_cast<std::int64_t>(slot->pixels.size()), std::memory_order_relaxed);
    }
  }
  return &scratch.image;
}

}  // namespace tipbench::data
