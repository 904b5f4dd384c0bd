// How the loader batches the dataset (tipbench/data/loader.h); no LibTorch here, so the CLI and
// the tests can name the options cheaply. Defaults are PyTorch's DataLoader defaults where it has
// one (num_workers=0, pin_memory=False, prefetch_factor=2).
//   LoaderOptions o;  o.batch_size = 32;  o.workers = 4;  o.pin_memory = true;
#pragma once

#include "tipbench/data/augment.h"

#include <cstdint>
#include <string>

namespace tipbench::data {

// What the loader does with a file it cannot read or decode: skip (count it, leave it out of its
// batch, carry on) or fail (the batch throws tipbench::InputError naming the file).
enum class CorruptPolicy { skip, fail };
std::string to_string(CorruptPolicy policy);  // "skip", "fail"
// Throws std::invalid_argument listing the valid names.
CorruptPolicy parse_corrupt_policy(const std::string& name);

struct LoaderOptions {
  std::int64_t batch_size = 32;
  int workers = 0;          // 0: batches are made on the calling thread, inside next()
  int prefetch_factor = 2;  // batches in flight per worker
  bool pin_memory = false;  // batches land in page-locked memory (needs CUDA)
  bool shuffle = true;      // a new permutation every epoch
  bool drop_last = true;    // every batch full: a fixed step shape
  std::uint64_t seed = 0;   // shuffles and augmentations: keyed by (seed, epoch, index)
  AugmentOptions augment;
  CorruptPolicy corrupt_policy = CorruptPolicy::skip;
  // Batches of uint8 pixels (crop and resize only; NVIDIA's fast_collate): a quarter of the float
  // bytes to copy, normalised by the consumer on its device (tipbench/data/device_normalize.h).
  bool uint8_batches = false;
  // Keep every decoded image in RAM after its first decode: later epochs skip reading and
  // decoding (the crop, flip and resize still run per epoch). Costs width x height x 3 bytes per image.
  bool cache_decoded = false;
  // Batches of the files' bytes (HostBatch::encoded), not pixels: the consumer decodes, crops and
  // resizes them on its GPU (nvJPEG; tipbench/data/nvjpeg_decoder.h). The workers only read each
  // file, check it with inspect_jpeg and draw its crop box: the same crops as the CPU paths'.
  bool decode_on_device = false;
};

}  // namespace tipbench::data
