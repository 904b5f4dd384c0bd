// The dataloader suite's workload: a training step (or, loader-only, no model at all) fed batch
// by batch from the on-disk JPEG dataset through the threaded loader and the device feeder.
// Besides the step times the harness takes, it measures over the timed steps (metrics()):
//   data_wait_fraction    host time blocked on the loader / host wall time of the timed steps
//   data_wait_ms          that blocked time per step
//   h2d_copy_ms           device time of one batch's host-to-device copy (CUDA only)
//   device_decode_ms      with decode on the device instead: device time of one batch's nvJPEG
//                         decode, crop and resize, and its labels' copy
//   cpu_busy_cores        process CPU time (every thread: workers, intra-op pool) / wall time
//   host_rss_bytes        the process's resident set at the end of the timed steps
//   skipped_files         corrupt or missing files left out of batches during the timed steps
//   decoded_cache_bytes   decoded images held in RAM (LoaderOptions::cache_decoded only)
// uint8 batches (and batches decoded on the device by nvJPEG) are normalised on the device inside
// the step; with the decoded cache the trial warms up for a whole epoch first, so its timed steps
// read the full cache.
// Example:
//   LoaderWorkloadSpec spec{.model = "resnet50", .batch_size = 128, .loader = {.workers = 8, .pin_memory = true}};
//   auto w = make_loader_workload(context, spec, data::read_manifest(dir), dir);
#pragma once

#include "tipbench/data/dataset.h"
#include "tipbench/data/loader_options.h"
#include "tipbench/suite/suite.h"

#include <memory>
#include <string>

namespace tipbench::suites {

struct LoaderWorkloadSpec {
  std::string model;  // the model trained; "" for loader-only
  std::int64_t batch_size = 0;
  data::LoaderOptions loader;  // workers, pin_memory, corrupt policy; batch size and crop set from here
};

std::unique_ptr<Workload> make_loader_workload(const SuiteContext& context, const LoaderWorkloadSpec& spec,
                                               data::Manifest manifest, const std::string& dataset_dir);

// The dataset a run uses when none is given: the cache directory's (quick or full spec), made or
// completed on first use (a line on stderr says so). Returns its directory. Call from prepare_run.
std::string cached_dataset(const SuiteContext& context, const std::string& suite_name);
// That dataset's directory, without making it (for prepare()).
std::string cached_dataset_dir(const SuiteContext& context);

}  // namespace tipbench::suites
