// Hands the training loop its next batch on the device, the way the loop of a PyTorch training
// script meets its DataLoader, and measures what that costs the loop:
//   - CPU: the host batch as it is; no copy.
//   - CUDA, pageable (pin_memory=false, PyTorch's default): `x.to(device)` on the current
//     stream: the host blocks until the copy (queued behind the previous step's kernels) is done.
//   - CUDA, pinned: the batch is already page-locked; its copy is issued with non_blocking=true
//     on a side stream one step ahead, so it overlaps the current step's compute. take() makes
//     the current stream wait for the copy's event (no use before the copy) and records the
//     device tensors on the current stream (their memory is not reused while it computes); the
//     page-locked source is not reused until its copy has finished (the copy records an event in
//     LibTorch's caching host allocator).
//   - CUDA, decode on the device (LoaderOptions::decode_on_device): the batch holds the files'
//     bytes; nvJPEG decodes them and each image is cropped, resized and flipped on the device, on
//     the side stream one step ahead when pinned. The bytes are kept until the device is done with
//     them. A file nvJPEG refuses is handed back to the loader (Loader::reject: skipped and
//     counted, or InputError, as --corrupt-policy says).
// Example, one training step:
//   DeviceBatch b = feeder.take();   // ready to use on the current stream
//   train_step(b.images, b.labels);  // enqueued
//   feeder.prefetch();               // blocks on the loader for the next batch, starts its copy
#pragma once

#include "tipbench/device/cuda_event_pool.h"
#include "tipbench/data/loader.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace tipbench::data {

class NvjpegDecoder;

struct DeviceBatch {
  torch::Tensor images;  // on the feeder's device
  torch::Tensor labels;
  std::int64_t rows = 0;
  int skipped = 0;  // files left out of this batch (corrupt or missing)
};

class DeviceFeeder {
 public:
  // `pinned`: the loader makes page-locked batches and copies go on a side stream. Needs CUDA.
  // With the loader's decode_on_device, throws std::runtime_error when nvJPEG cannot run on `device`.
  DeviceFeeder(Loader& loader, c10::Device device, bool pinned);
  ~DeviceFeeder();
  DeviceFeeder(const DeviceFeeder&) = delete;
  DeviceFeeder& operator=(const DeviceFeeder&) = delete;

  // The batch to compute on now (fetched here if prefetch() was not called since the last take).
  DeviceBatch take();
  // Fetches the next host batch, blocking on the loader, and starts its copy to the device.
  void prefetch();

  // Starts the counters below afresh (at the start of the timed steps).
  void reset_counters();
  double wait_seconds() const { return wait_s_; }  // host time blocked on the loader
  std::int64_t batches() const { return batches_; }
  std::int64_t skipped_corrupt() const { return skipped_corrupt_; }
  std::int64_t skipped_missing() const { return skipped_missing_; }
  // Mean device time of a host-to-device batch copy (with decode on the device: of the decode,
  // crop and resize, and the labels' copy) since reset_counters(); waits for the last copy to
  // finish. nullopt on the CPU or before any copy.
  std::optional<double> mean_copy_ms() const;
  // "none", "blocking on the current stream" or "non_blocking on a side stream, one batch ahead";
  // with decode on the device, where the decode runs.
  std::string copy_mode() const;
  // The nvJPEG backend that decodes ("" without decode on the device).
  std::string decode_backend() const;

 private:
  struct Staged {
    HostBatch host;  // held until its batch is taken
    torch::Tensor images, labels;
    std::unique_ptr<at::cuda::CUDAEvent> copied;  // pinned path or decode on the device: the batch is ready
    int rejected = 0;                             // files nvJPEG refused (decode on the device)
  };
  // A decoded batch's file bytes, kept until the device has finished reading them.
  struct InFlight {
    HostBatch host;
    std::unique_ptr<at::cuda::CUDAEvent> done;
  };
  // A batch's copy (or decode), bracketed by two events of the pool; read back once `end` has
  // completed, then the events go back to the pool.
  struct CopyTiming {
    std::unique_ptr<at::cuda::CUDAEvent> start, end;
    bool counted = true;  // false: issued before reset_counters()
  };

  void copy_to_device(Staged& staged);
  void decode_on_device(Staged& staged);
  void release_finished();
  void read_back_copies(bool wait) const;

  Loader& loader_;
  c10::Device device_;
  bool pinned_;
  std::optional<c10::cuda::CUDAStream> side_stream_;
  std::optional<Staged> staged_;
  double wait_s_ = 0;
  std::int64_t batches_ = 0, skipped_corrupt_ = 0, skipped_missing_ = 0;
  // CUDA: every event comes from here, made before the timed steps (none is created per batch).
  mutable std::unique_ptr<CudaEventPool> events_;
  mutable std::deque<CopyTiming> copies_;  // not read back yet
  mutable double copy_ms_total_ = 0;
  mutable std::int64_t copies_read_ = 0;
  std::unique_ptr<NvjpegDecoder> decoder_;  // decode on the device only
  std::deque<InFlight> in_flight_;
};

}  // namespace tipbench::data
