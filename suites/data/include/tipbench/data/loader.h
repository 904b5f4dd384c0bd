// The threaded DataLoader: worker threads read, decode (libjpeg-turbo) and augment whole batches
// ahead of the training loop, as PyTorch's DataLoader workers do, and hand them over in order.
// workers = 0 makes each batch on the calling thread inside next() (PyTorch's default); with
// workers = W, up to W * prefetch_factor batches are made ahead. With pin_memory the workers
// write each batch straight into page-locked memory (LibTorch's caching host allocator), ready
// for an asynchronous copy to the GPU. Every sample is seen exactly once per epoch, and a batch
// holds the same samples with the same augmentation for any worker count. Example:
//   Loader loader(read_manifest(dir), dir, {.batch_size = 32, .workers = 4});
//   HostBatch b = loader.next();   // b.images: (32, 3, 224, 224) float32, b.labels: (32) int64
#pragma once

#include "tipbench/data/augment.h"
#include "tipbench/data/dataset.h"
#include "tipbench/data/loader_options.h"

#include <torch/torch.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tipbench::data {

// One file of a decode_on_device batch, as the workers hand it over.
struct EncodedImage {
  std::vector<std::uint8_t> bytes;  // the whole file
  int width = 0, height = 0;        // from its header
  CropBox box;                      // drawn as the CPU paths draw it: the same crop for the same seed
};

struct HostBatch {
  torch::Tensor images;  // (rows, 3, S, S) float32 (uint8 with uint8_batches), page-locked with pin_memory;
                         // undefined with decode_on_device
  std::vector<EncodedImage> encoded;  // decode_on_device: one per row
  torch::Tensor labels;               // (rows) int64, page-locked with pin_memory
  std::vector<std::int64_t> indices;  // the dataset index of each row
  std::int64_t sequence = 0;          // batches since the loader started
  std::int64_t epoch = 0;
  int skipped_corrupt = 0;  // files that would have been rows here but could not be decoded
  int skipped_missing = 0;  // ... or read
  std::int64_t rows() const { return static_cast<std::int64_t>(indices.size()); }
};

struct BadFile {
  std::string path;  // relative to the dataset directory
  std::string reason;
};

class Loader {
 public:
  // `root` is the dataset directory the manifest's paths are relative to. Throws
  // std::invalid_argument for options that cannot work (no batch fits in the dataset).
  Loader(Manifest manifest, std::string root, LoaderOptions options);
  // Stops the workers: a batch in progress is abandoned at its next sample, then all are joined.
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch in order. Blocks until it is made. Rethrows what making it threw: with
  // CorruptPolicy::fail, a tipbench::InputError naming the bad file.
  HostBatch next();

  // A file the workers passed that the consumer could not decode (nvJPEG on the device): recorded
  // and counted as the workers' own skips are. Throws InputError under CorruptPolicy::fail.
  void reject(std::int64_t index, const std::string& reason);

  const LoaderOptions& options() const { return options_; }
  std::int64_t batches_per_epoch() const { return batches_per_epoch_; }
  // Batches made ahead of the consumer at most: workers * prefetch_factor (0 without workers).
  int prefetch_depth() const { return depth_; }
  // Host bytes of one full batch (images + labels; with decode_on_device, the mean file size
  // times the batch size).
  std::int64_t batch_bytes() const;
  // Distinct files skipped so far, in the order found (at most 100 are kept).
  std::vector<BadFile> bad_files() const;
  std::int64_t skipped_total() const { return skipped_total_.load(); }
  // cache_decoded: bytes of decoded images held, and how many samples were served from the cache.
  std::int64_t cached_bytes() const { return cached_bytes_.load(); }
  std::int64_t cache_hits() const { return cache_hits_.load(); }
  // Batches made and waiting for the consumer now (at most prefetch_depth()).
  int ready_batches() const;

 private:
  struct Scratch {
    std::vector<std::uint8_t> file;
    RgbImage image;
    ResizeScratch resize;
  };
  struct Slot {
    HostBatch batch;
    std::exception_ptr error;
  };

  void worker_loop();
  HostBatch make_batch(std::int64_t sequence, Scratch& scratch);
  // decode_on_device: the file of `index`, read and checked, with its crop box drawn. false when
  // it was skipped (counted in `batch`).
  bool add_encoded(std::int64_t index, std::int64_t epoch, HostBatch& batch);
  // RandomResizedCrop's box for `index` in `epoch`, keyed by (seed, epoch, index): the same for
  // any worker count and for every pipeline.
  CropBox crop_box(std::int64_t index, std::int64_t epoch, int width, int height) const;
  // The decoded image of `index`: from the cache, else read and decoded into scratch (and cached
  // with cache_decoded). nullptr when the file was skipped (counted in `batch`).
  const RgbImage* decoded(std::int64_t index, Scratch& scratch, HostBatch& batch,
                          std::shared_ptr<const RgbImage>& hold);
  std::shared_ptr<const std::vector<std::int64_t>> permutation(std::int64_t epoch);
  // Records a bad file; throws InputError under CorruptPolicy::fail.
  void skip(const ManifestEntry& entry, const std::string& reason);

  const Manifest manifest_;
  const std::string root_;
  const LoaderOptions options_;
  const std::int64_t batches_per_epoch_;
  const int depth_;

  // Work hand-out and the in-order hand-over (workers > 0).
  mutable std::mutex mutex_;
  std::condition_variable work_cv_, ready_cv_;
  std::int64_t next_to_claim_ = 0;  // sequence numbers below this are claimed by a worker
  std::int64_t consumed_ = 0;       // sequence numbers below this were handed to the consumer
  std::map<std::int64_t, Slot> ready_;
  bool stop_ = false;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> workers_;
  Scratch inline_scratch_;  // workers = 0

  std::mutex permutation_mutex_;
  std::vector<std::pair<std::int64_t, std::shared_ptr<const std::vector<std::int64_t>>>> permutations_;

  mutable std::mutex bad_mutex_;
  std::set<std::string> bad_paths_;
  std::vector<BadFile> bad_files_;
  std::atomic<std::int64_t> skipped_total_{0};
  std::mutex cache_mutex_;
  std::vector<std::shared_ptr<const RgbImage>> cache_;  // by dataset index; cache_decoded only
  std::atomic<std::int64_t> cached_bytes_{0}, cache_hits_{0};
};

}  // namespace tipbench::data
