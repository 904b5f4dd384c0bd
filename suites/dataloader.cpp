// Tip: load data asynchronously (DataLoader num_workers > 0) into pinned memory (pin_memory=True)
// and copy it with non_blocking=True, so decoding and augmentation on the CPU overlap the
// training step instead of starving it. A grid of workers {0, 1, 2, 4, ..., cores} x
// pin_memory {false, true}, training on a real on-disk JPEG dataset (decode with libjpeg-turbo,
// RandomResizedCrop + flip + normalize on CPU workers). Baseline: workers 0, pin_memory false
// (PyTorch's defaults). --loader-only drops the model: the data-loading ceiling, measured next to
// the model's consumption rate on synthetic data, says whether training is input-bound.
// A second case per model climbs the input-pipeline ladder at workers = cores (pinned, with the
// side-stream prefetch of the next batch, on CUDA): float batches normalised by the workers
// (baseline), uint8 batches normalised on the device (NVIDIA's fast_collate: a quarter of the
// bytes), uint8 with every decoded image kept in RAM after the first epoch, and the files decoded
// on the GPU by nvJPEG, cropped and resized there (DALI's approach; CUDA only).
#include "dataloader/loader_notes.h"
#include "common/loader_workload.h"
#include "common/training.h"
#include "tipbench/data/dataset.h"
#include "tipbench/data/nvjpeg_decoder.h"
#include "tipbench/data/system.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"

#include <fmt/format.h>

namespace tipbench::suites {

namespace {

// 0, 1, 2, 4, ... below the core count, then the core count itself.
std::vector<int> worker_counts(int cores) {
  std::vector<int> counts{0};
  for (int w = 1; w < cores; w *= 2) counts.push_back(w);
  counts.push_back(cores);
  return counts;
}

// --batch-size, else the training suites' default; a --quick run on a CPU uses 8 so its short
// trials still span many batches (decoding 500x375 JPEGs costs a few ms per image per core).
std::int64_t loader_batch_size(const SuiteContext& context, const std::string& model) {
  if (context.batch_size <= 0 && context.quick && !context.device.is_cuda()) return 8;
  return batch_size_for(context, model);
}

const SuiteOption kDataOption{
    .name = "data",
    .type = OptionType::text,
    .default_value = "",
    .help = "dataset directory (tipbench data make); default: one in the cache directory, made on first use"};
const SuiteOption kLoaderOnlyOption{
    .name = "loader-only",
    .type = OptionType::flag,
    .default_value = "false",
    .help = "fetch batches with no model (the data-loading ceiling) and compare with the model's consumption"};
const SuiteOption kCorruptPolicyOption{
    .name = "corrupt-policy",
    .type = OptionType::choice,
    .default_value = "skip",
    .help = "a corrupt or missing file is skipped (counted) or fails the run (exit 2)",
    .choices = {"skip", "fail"}};

bool loader_only(const SuiteContext& context) { return kLoaderOnlyOption.flag(context.options); }

std::string grid_arm_name(int workers, bool pin) { return fmt::format("w{}{}", workers, pin ? "_pin" : ""); }

constexpr const char* kLadder = "ladder";

// The ladder's rungs: host_float, then uint8 batches, then a remedy on top of those: the decoded
// cache, or decoding on the GPU. --quick leaves out the cache, whose trials first warm up for a
// whole epoch (the quick suite's budget).
constexpr const char* kNvjpeg = "nvjpeg";
std::vector<ArmSpec> ladder_arms(const SuiteContext& context) {
  std::vector<ArmSpec> rungs{{"host_float", {{"pixels", "float"}, {"cache", "off"}, {"decode", "cpu"}}},
                             {"uint8", {{"pixels", "uint8"}, {"cache", "off"}, {"decode", "cpu"}}}};
  if (!context.quick) {
    rungs.push_back({"uint8_cache", {{"pixels", "uint8"}, {"cache", "decoded"}, {"decode", "cpu"}}});
  }
  rungs.push_back({kNvjpeg, {{"pixels", "uint8"}, {"cache", "off"}, {"decode", kNvjpeg}}});
  return rungs;
}

bool is_ladder(const CaseSpec& c) {
  for (const auto& [k, v] : c.params) {
    if (k == "pipeline") return v == kLadder;
  }
  return false;
}

std::string dataset_dir(const SuiteContext& context) {
  const std::string given = kDataOption.text(context.options);
  return given.empty() ? cached_dataset_dir(context) : given;
}

data::CorruptPolicy corrupt_policy(const SuiteContext& context) {
  try {
    return data::parse_corrupt_policy(kCorruptPolicyOption.text(context.options));
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
}

}  // namespace

class DataLoader final : public Suite {
 public:
  std::string name() const override { return "dataloader"; }
  std::string description() const override {
    return "DataLoader workers {0, 1, 2, 4, ..., cores} x pin_memory, training from on-disk JPEGs "
           "(default: workers 0, pageable); the pipeline ladder: float batches, uint8 normalised on the device, "
           "+ decoded RAM cache, nvJPEG decode on the GPU";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000-004",
                       "workers and pinned memory \"almost always better\" (000); uint8 batches: 4x fewer "
                       "bytes, no CPU float work (001); decode on the GPU: with many cores still CPU-bound "
                       "for CNNs (001, 002); cache decoded data: decode once (001, 002); prefetch on a side "
                       "stream: the copy overlaps compute (002)"};
  }
  // The ladder case: images/s per rung against the model's consumption.
  ChartKind chart() const override { return ChartKind::pipeline_ladder; }
  std::vector<SuiteOption> options() const override { return {kDataOption, kLoaderOnlyOption, kCorruptPolicyOption}; }

  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<ArmSpec> grid;
    for (bool pin : {false, true}) {
      for (int workers : worker_counts(data::available_cores())) {
        grid.push_back({grid_arm_name(workers, pin),
                        {{"workers", std::to_string(workers)}, {"pin_memory", pin ? "true" : "false"}}});
      }
    }
    std::vector<CaseSpec> out;
    for (const auto& model : models_to_run(context)) {
      Levels params{{"mode", loader_only(context) ? "loader_only" : "train"},
                    {"model", model},
                    {"batch", std::to_string(loader_batch_size(context, model))},
                    {"image_size", std::to_string(models::resolved_image_size(model, {}))}};
      // The model's consumption rate: training on batches already on the device.
      const ArmSpec synthetic{"synthetic", {{"input", "synthetic"}}};
      std::vector<ArmSpec> arms = grid;
      if (loader_only(context)) arms.push_back(synthetic);
      out.push_back({params, arms});

      Levels ladder = params;
      ladder.emplace_back("pipeline", kLadder);
      ladder.emplace_back("workers", std::to_string(data::available_cores()));
      ladder.emplace_back("pin_memory", context.device.is_cuda() ? "true" : "false");
      std::vector<ArmSpec> rungs = ladder_arms(context);
      if (loader_only(context)) rungs.push_back(synthetic);
      out.push_back({ladder, rungs});
    }
    return out;
  }

  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    const bool pin = arm.name != "synthetic" && !is_ladder(c) && level(arm.levels, "pin_memory") == "true";
    if (pin && !context.device.is_cuda()) {
      return "pin_memory page-locks batches for asynchronous copies to a CUDA device; this run is on " +
             context.device.str() + " (the workers axis runs)";
    }
    if (arm.name == kNvjpeg) return data::nvjpeg_unavailable_reason(context.device);
    return std::nullopt;
  }

  void prepare_run(const SuiteContext& context) const override {
    corrupt_policy(context);                          // a bad name is an input error before anything runs
    if (kDataOption.text(context.options).empty()) {  // the cache's dataset: made, or completed, on first use
      cached_dataset(context, name());
      return;
    }
    const std::string dir = dataset_dir(context);
    const auto check = data::check_dataset(dir);
    if (!check.dir_exists) {
      throw InputError(fmt::format(
          "--data {}: no such directory. Make a dataset there with: tipbench data make --out {}", dir, dir));
    }
    if (!check.manifest) {
      throw InputError(
          fmt::format("--data {}: not a complete dataset ({}). Make or complete it with: tipbench data "
                      "make --out {} (with the flags it was made with)",
                      dir, check.manifest_error, dir));
    }
    for (const auto& c : cases(context)) {
      const auto batch = level_int(c.params, "batch");
      if (check.manifest->spec.images < batch) {
        throw InputError(
            fmt::format("--data {}: {} images, fewer than one batch of {}; make a larger dataset "
                        "(tipbench data make --images N) or pass a smaller --batch-size",
                        dir, check.manifest->spec.images, batch));
      }
    }
    if (!check.absent.empty()) {
      fmt::print(stderr, "dataloader: {} of {} files listed in {}/{} are missing or of another size (first: {}); {}\n",
                 check.absent.size(), check.manifest->files.size(), dir, data::kManifestName, check.absent.front(),
                 corrupt_policy(context) == data::CorruptPolicy::skip
                     ? "they are skipped and counted (--corrupt-policy skip)"
                     : "the run stops at the first (--corrupt-policy fail)");
    }
  }

  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const std::string dir = dataset_dir(context);
    data::Manifest manifest = data::read_manifest(dir);
    const auto model = level(c.params, "model");
    const auto batch = level_int(c.params, "batch");
    const auto image = static_cast<int>(level_int(c.params, "image_size"));
    if (arm.name == "synthetic") {
      TrainingSpec spec;
      spec.model = model;
      spec.batch_size = batch;
      spec.model_options.image_size = image;
      spec.model_options.num_classes = manifest.spec.classes;
      return make_training_workload(context, spec);
    }
    LoaderWorkloadSpec spec;
    spec.model = level(c.params, "mode") == "train" ? model : "";
    spec.batch_size = batch;
    const Levels& cell = is_ladder(c) ? c.params : arm.levels;  // the ladder's cell is the case's
    spec.loader.workers = static_cast<int>(level_int(cell, "workers"));
    spec.loader.pin_memory = level(cell, "pin_memory") == "true";
    if (is_ladder(c)) {
      spec.loader.uint8_batches = level(arm.levels, "pixels") == "uint8";
      spec.loader.cache_decoded = level(arm.levels, "cache") == "decoded";
      spec.loader.decode_on_device = level(arm.levels, "decode") == kNvjpeg;
    }
    spec.loader.corrupt_policy = corrupt_policy(context);
    spec.loader.seed = context.seed;
    spec.loader.augment.output_size = image;
    return make_loader_workload(context, spec, std::move(manifest), dir);
  }

  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    return dataloader_notes(result, settings);
  }
};

TIPBENCH_REGISTER_SUITE(DataLoader);

}  // namespace tipbench::suites
