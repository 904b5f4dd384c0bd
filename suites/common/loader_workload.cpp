#include "loader_workload.h"

#include "tipbench/data/device_feeder.h"
#include "tipbench/data/device_normalize.h"
#include "tipbench/data/loader.h"
#include "tipbench/data/system.h"
#include "tipbench/models/model.h"
#include "optimizers.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <chrono>
#include <optional>

namespace tipbench::suites {

namespace {

using Clock = std::chrono::steady_clock;

// A trial that skipped more of its files than this is invalid: its samples/s counts images never
// decoded (a directory of corrupt files "loads" at 100k samples/s).
constexpr double kMaxSkippedShare = 0.01;

class LoaderWorkload final : public Workload {
 public:
  LoaderWorkload(const SuiteContext& context, const LoaderWorkloadSpec& spec, data::Manifest manifest,
                 const std::string& dir)
      : spec_(spec),
        device_(context.device),
        dataset_(manifest.spec),
        dataset_dir_(dir),
        dataset_bytes_(manifest.total_bytes()) {
    spec_.loader.batch_size = spec.batch_size;
    if (!spec_.model.empty()) {
      models::ModelOptions options{.num_classes = manifest.spec.classes,
                                   .image_size = spec_.loader.augment.output_size};
      model_ = models::make_model(spec_.model, options);
      model_.ptr()->to(device_);
      model_.ptr()->train();
      parameters_ = models::count_parameters(*model_.ptr());
      optimizer_ = make_default_sgd(model_.ptr()->parameters());
    }
    // Last, so the workers start from an empty queue once the model is ready, as in a training
    // script whose loader is iterated after the model is built.
    loader_ = std::make_unique<data::Loader>(std::move(manifest), dir, spec_.loader);
    feeder_ = std::make_unique<data::DeviceFeeder>(*loader_, device_, spec_.loader.pin_memory);
    if (spec_.loader.uint8_batches || spec_.loader.decode_on_device) normalize_.emplace(device_, spec_.loader.augment);
  }

  void step() override {
    const data::DeviceBatch batch = feeder_->take();
    rows_ += batch.rows;
    skipped_ += batch.skipped;
    // uint8 batches: ToTensor + Normalize here, on the device, part of the pipeline's work even
    // without a model.
    const torch::Tensor images = normalize_ ? (*normalize_)(batch.images) : batch.images;
    if (optimizer_ && batch.rows > 0) {  // a batch whose every file was skipped trains nothing
      optimizer_->zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model_.forward(images), batch.labels);
      loss.backward();
      optimizer_->step();
    }
    feeder_->prefetch();  // the loop's next(loader): blocks while the workers are behind
    ++steps_;
    last_step_end_ = Clock::now();
    last_cpu_s_ = data::process_cpu_seconds();
  }

  std::int64_t samples_per_step() const override { return spec_.batch_size; }

  // With the decoded cache, warm up for a whole epoch plus the batches made ahead, so the timed
  // steps see the cache full (the steady state of every later epoch), not the first decode.
  int fixed_warmup_steps() const override {
    if (!spec_.loader.cache_decoded) return 0;
    return static_cast<int>(loader_->batches_per_epoch()) + loader_->prefetch_depth() + 1;
  }

  void begin_measurement() override {
    feeder_->reset_counters();
    steps_ = 0;
    rows_ = skipped_ = 0;
    start_ = last_step_end_ = Clock::now();
    start_cpu_s_ = last_cpu_s_ = data::process_cpu_seconds();
  }

  std::map<std::string, double> metrics() const override {
    std::map<std::string, double> m;
    const double wall_s = std::chrono::duration<double>(last_step_end_ - start_).count();
    if (steps_ == 0 || wall_s <= 0) return m;
    m["data_wait_fraction"] = feeder_->wait_seconds() / wall_s;
    m["data_wait_ms"] = feeder_->wait_seconds() * 1000 / static_cast<double>(steps_);
    m["cpu_busy_cores"] = (last_cpu_s_ - start_cpu_s_) / wall_s;
    if (const auto ms = feeder_->mean_copy_ms())
      m[spec_.loader.decode_on_device ? "device_decode_ms" : "h2d_copy_ms"] = *ms;
    if (const auto rss = data::resident_set_bytes(); rss >= 0) m["host_rss_bytes"] = static_cast<double>(rss);
    m["skipped_files"] = static_cast<double>(skipped_);
    if (spec_.loader.cache_decoded) m["decoded_cache_bytes"] = static_cast<double>(loader_->cached_bytes());
    return m;
  }

  std::string pixels_info() const {
    const auto& o = spec_.loader;
    if (o.decode_on_device) return "uint8, decoded, cropped and normalised on the device";
    return o.uint8_batches ? "uint8, normalised on the device" : "float32, normalised by the loader";
  }

  std::optional<std::string> invalid_reason() const override {
    // The batches the timed steps consumed (the workers may have decoded more ahead of them).
    const auto files = skipped_ + rows_;
    if (files == 0 || static_cast<double>(skipped_) <= kMaxSkippedShare * static_cast<double>(files)) {
      return std::nullopt;
    }
    return fmt::format(
        "the loader skipped {} of {} files ({:.1f}%) as corrupt or missing, more than the {:g}% a "
        "valid trial allows (--corrupt-policy skip): its samples/s would count images never loaded",
        skipped_, files, 100.0 * static_cast<double>(skipped_) / static_cast<double>(files), 100 * kMaxSkippedShare);
  }

  nlohmann::json info() const override {
    const auto& o = spec_.loader;
    nlohmann::json j = {
        {"mode", spec_.model.empty() ? "loader_only" : "train"},
        {"batch_size", spec_.batch_size},
        {"image_size", o.augment.output_size},
        {"workers", o.workers},
        {"pin_memory", o.pin_memory},
        {"prefetch_batches", loader_->prefetch_depth()},
        {"batch_bytes", loader_->batch_bytes()},
        {"batches_per_epoch", loader_->batches_per_epoch()},
        {"h2d_copy", feeder_->copy_mode()},
        {"pixels", pixels_info()},
        {"decode",
         o.decode_on_device ? "nvJPEG on the device: " + feeder_->decode_backend() : "libjpeg-turbo on the workers"},
        {"decoded_cache", o.cache_decoded},
        {"torch_threads", torch::get_num_threads()},
        {"cpu_cores", data::available_cores()},
        {"corrupt_policy", data::to_string(o.corrupt_policy)},
        {"dataset",
         {{"dir", dataset_dir_},
          {"images", dataset_.images},
          {"width", dataset_.width},
          {"height", dataset_.height},
          {"classes", dataset_.classes},
          {"quality", dataset_.quality},
          {"seed", dataset_.seed},
          {"bytes", dataset_bytes_}}},
    };
    if (!spec_.model.empty()) {
      j["model"] = spec_.model;
      j["parameters"] = parameters_;
      j.update(default_sgd_info(device_));
    }
    // Every distinct file skipped in this trial (warm-up included), with why.
    const auto bad = loader_->bad_files();
    if (!bad.empty()) {
      j["skipped_files"] = nlohmann::json::array();
      for (const auto& f : bad) j["skipped_files"].push_back({{"path", f.path}, {"reason", f.reason}});
    }
    return j;
  }

 private:
  LoaderWorkloadSpec spec_;
  c10::Device device_;
  data::DatasetSpec dataset_;
  std::string dataset_dir_;
  std::int64_t dataset_bytes_ = 0;
  torch::nn::AnyModule model_;
  std::int64_t parameters_ = 0;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;  // make_default_sgd: Python's default step
  std::unique_ptr<data::Loader> loader_;
  std::unique_ptr<data::DeviceFeeder> feeder_;
  std::optional<data::DeviceNormalizer> normalize_;  // uint8 batches only
  std::int64_t steps_ = 0;
  std::int64_t rows_ = 0;     // images delivered to the timed steps
  std::int64_t skipped_ = 0;  // files left out of the batches the timed steps took
  Clock::time_point start_, last_step_end_;
  double start_cpu_s_ = 0, last_cpu_s_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_loader_workload(const SuiteContext& context, const LoaderWorkloadSpec& spec,
                                               data::Manifest manifest, const std::string& dataset_dir) {
  return std::make_unique<LoaderWorkload>(context, spec, std::move(manifest), dataset_dir);
}

namespace {
data::DatasetSpec cached_dataset_spec(const SuiteContext& context) {
  return context.quick ? data::quick_dataset_spec() : data::DatasetSpec{};
}
}  // namespace

std::string cached_dataset_dir(const SuiteContext& context) {
  return data::default_dataset_dir(cached_dataset_spec(context));
}

std::string cached_dataset(const SuiteContext& context, const std::string& suite_name) {
  const auto spec = cached_dataset_spec(context);
  const std::string dir = data::default_dataset_dir(spec);
  const auto report = data::make_dataset(dir, spec, {.verify_checksums = false});
  if (report.outcome != data::MakeOutcome::reused) {
    fmt::print(stderr, "{}: {} {} ({}) in {:.1f} s\n", suite_name,
               report.outcome == data::MakeOutcome::made ? "made" : "completed", dir, spec.describe(), report.seconds);
  }
  return dir;
}

}  // namespace tipbench::suites
