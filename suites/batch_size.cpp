// Tip: use the largest batch that fits, and keep accuracy with the linear scaling rule (LR
// proportional to the batch), a linear warm-up and cosine decay. Two experiments per model:
//   sweep             one arm per batch size (powers of two; arm 0, the smallest, is the
//                     baseline): throughput, step time and memory against the batch. On CUDA,
//                     batches above the largest that fits (an out-of-memory search before the
//                     run) are skipped. The suite's notes mark where throughput stops growing.
//   time_to_accuracy  train from scratch to a target test accuracy on an in-memory learnable
//                     task: small batch (baseline), large batch with the scaled LR and no
//                     warm-up (not with --quick), large batch with the scaled LR and warm-up.
//                     One step = one epoch; block k trains with seed + k (TrialInfo), a fixed
//                     seed set shared by the arms.
// More samples per second is not the goal: time to the target is, and the notes report it.
#include "common/device_memory.h"
#include "batch_size/lr_schedule.h"
#include "batch_size/time_to_accuracy.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace tipbench::suites {

namespace {

// The time-to-accuracy recipe per device: a task the model learns in a few epochs, a small batch
// with a tuned LR, and a large batch (4x with --quick, else 8x) at the linearly scaled LR. The
// CPU targets sit where the arms' median curves cross them within the epochs a trial times (at
// least 5 with --quick); a seed that does not get there is counted as not reached. The CUDA
// recipe is untuned (no GPU was at hand): its curves say how far each arm got.
struct TimeToAccuracyRecipe {
  LearnableDataOptions data;
  std::int64_t small_batch = 32;
  double small_lr = 0.05;
  std::int64_t large_factor = 8;
  double warmup_epochs = 2;
  std::int64_t schedule_epochs = 10;
  double target_accuracy = 0.85;
};

TimeToAccuracyRecipe recipe_for(const SuiteContext& context, const std::string& model) {
  TimeToAccuracyRecipe r;
  if (context.device.is_cuda()) {
    r.data = {.train_samples = 16384, .test_samples = 4096, .image_size = 32, .noise = 8.0, .seed = context.seed};
    r.small_batch = 128;
    r.small_lr = 0.1;
    r.target_accuracy = 0.8;
  } else if (!context.quick) {
    r.data = {.train_samples = 2048, .test_samples = 1024, .image_size = 16, .noise = 8.0, .seed = context.seed};
    r.target_accuracy = 0.82;  // the arms plateau at 0.84-0.86 here
  } else {
    r.data = {.train_samples = 2048, .test_samples = 512, .image_size = 8, .noise = 4.0, .seed = context.seed};
    r.small_batch = 64;  // fewer, larger steps keep an epoch cheap
    r.small_lr = 0.1;
    r.large_factor = 4;
    r.warmup_epochs = 1;
    r.schedule_epochs = 6;
    r.target_accuracy = 0.82;
  }
  if (model_family(model) == "vit") r.data.image_size = std::max<std::int64_t>(r.data.image_size, 32);
  // A model file takes its own input size only (its recipe is untuned there, like the CUDA one).
  if (model_family(model) == "file") r.data.image_size = models::resolved_image_size(model, {});
  return r;
}

// The largest image a CPU trains the time-to-accuracy epochs at within a quick suite's budget.
constexpr std::int64_t kCpuTimeToAccuracyMaxImage = 32;

// Powers of two around the model's default batch: CPU 1/4x..8x (quick 1/2x..2x); CUDA 16..4096
// (quick 1/4x..2x), the ones that do not fit skipped.
std::vector<std::int64_t> sweep_batches(const SuiteContext& context, const std::string& model) {
  SuiteContext defaults = context;
  defaults.batch_size = 0;  // the sweep sets its own batches
  const std::int64_t b = batch_size_for(defaults, model);
  std::int64_t lo = context.quick ? b / 2 : b / 4, hi = context.quick ? b * 2 : b * 8;
  if (context.device.is_cuda()) {
    lo = context.quick ? b / 4 : 16;
    hi = context.quick ? b * 2 : 4096;
  }
  std::vector<std::int64_t> out;
  for (std::int64_t x = 1; x <= hi; x *= 2) {
    if (x >= std::max<std::int64_t>(1, lo)) out.push_back(x);
  }
  return out;
}

// Where doubling the batch stops paying: each arm against the one before it (same blocks).
std::string sweep_note(const CaseResult& c, const MeasureSettings& settings) {
  std::vector<const ArmResult*> ok;
  for (const auto& arm : c.arms) {
    if (arm.status == ArmStatus::ok && !arm.trials.empty()) ok.push_back(&arm);
  }
  if (ok.size() < 2) return c.name + ": fewer than two batch sizes ran; no growth to judge";
  std::string last;
  for (std::size_t i = 1; i < ok.size(); ++i) {
    const auto k = compare_arms(*ok[i], *ok[i - 1], trial_throughput(), settings);
    if (!k) return fmt::format("{}: fewer than {} paired blocks; no growth to judge", c.name, kMinPairedBlocks);
    last = fmt::format("{} vs {}: throughput x{:.2f} [{:.2f}, {:.2f}] {}{}", ok[i]->arm, ok[i - 1]->arm,
                       k->estimate.ratio, k->estimate.ci_low, k->estimate.ci_high, stats::verdict_words(k->verdict),
                       k->noisy ? " [noisy]" : "");
    if (k->verdict != stats::Verdict::faster) {
      return fmt::format("{}: throughput stops growing at batch {} ({})", c.name, level(ok[i - 1]->levels, "batch"),
                         last);
    }
  }
  return fmt::format("{}: throughput still grows at the largest batch measured ({})", c.name, last);
}

std::string summary_text(const stats::Summary& s, const char* format) {
  return fmt::format(fmt::runtime(format), s.median, s.p10, s.p90);
}

std::vector<std::string> time_to_accuracy_notes(const CaseResult& c) {
  std::vector<std::string> out;
  for (const auto& arm : c.arms) {
    if (arm.status != ArmStatus::ok || arm.trials.empty()) continue;
    const double target = arm.info.value("target_accuracy", 0.0);
    std::size_t reached = 0;
    for (const auto& t : arm.trials) reached += t.metrics.count("epochs_to_target");
    std::string line = fmt::format("{} arm {}: target accuracy {:.2f} reached in {}/{} seeds", c.name, arm.arm, target,
                                   reached, arm.trials.size());
    if (reached > 0) {
      line += summary_text(arm.metrics.at("epochs_to_target"), "; epochs {:.0f} (p10 {:.0f}, p90 {:.0f})");
      line += summary_text(arm.metrics.at("seconds_to_target"), "; seconds {:.2f} (p10 {:.2f}, p90 {:.2f})");
    }
    std::string curve;
    for (int e = 1; arm.metrics.count(fmt::format("accuracy_at_epoch_{:03}", e)); ++e) {
      curve += fmt::format(" {:.3f}", arm.metrics.at(fmt::format("accuracy_at_epoch_{:03}", e)).median);
    }
    if (!curve.empty()) line += "; median accuracy by epoch:" + curve;
    out.push_back(line);
  }
  return out;
}

}  // namespace

class BatchSize final : public Suite {
 public:
  std::string name() const override { return "batch_size"; }
  std::string description() const override {
    return "batch-size sweep (throughput, memory) and time-to-accuracy with the linear scaling rule, LR "
           "warm-up and cosine decay";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000, 001, 002, 004",
                       "a larger batch with linear LR scaling and warm-up; speed does not grow linearly (001)"};
  }
  // The sweep: throughput and memory against the batch.
  ChartKind chart() const override { return ChartKind::batch_curves; }

  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    for (const auto& model : models_to_run(context)) {
      CaseSpec sweep{{{"model", model}, {"experiment", "sweep"}}, {}};
      for (auto b : sweep_batches(context, model)) {
        sweep.arms.push_back({"b" + std::to_string(b), {{"batch", std::to_string(b)}}});
      }
      out.push_back(std::move(sweep));

      const TimeToAccuracyRecipe r = recipe_for(context, model);
      const std::int64_t large = r.small_batch * r.large_factor;
      const std::string large_lr = fmt::format("{:g}", linear_scaled_lr(r.small_lr, large, r.small_batch));
      const std::string warmup = fmt::format("{:g}", r.warmup_epochs);
      CaseSpec tta{{{"model", model}, {"experiment", "time_to_accuracy"}},
                   {{"small",
                     {{"batch", std::to_string(r.small_batch)},
                      {"lr", fmt::format("{:g}", r.small_lr)},
                      {"warmup_epochs", "0"}}}}};
      // --quick: the tip as stated (large batch, scaled LR, warm-up) only; each arm of this
      // experiment costs a quick CPU run ~12 s, a third of the time the other suites take together.
      if (!context.quick) {
        tta.arms.push_back({"large", {{"batch", std::to_string(large)}, {"lr", large_lr}, {"warmup_epochs", "0"}}});
      }
      tta.arms.push_back(
          {"large_warmup", {{"batch", std::to_string(large)}, {"lr", large_lr}, {"warmup_epochs", warmup}}});
      out.push_back(std::move(tta));
    }
    return out;
  }

  // CUDA: the largest batch that fits, per model, found before any trial (out-of-memory search).
  void prepare_run(const SuiteContext& context) const override {
    if (!context.device.is_cuda()) return;
    for (const auto& model : models_to_run(context)) {
      const auto batches = sweep_batches(context, model);
      auto make = [&](std::int64_t b) {
        return make_training_workload(context, TrainingSpec{.model = model, .batch_size = b, .model_options = {}});
      };
      // From the model's default batch (the answer is near it more often than near the sweep's
      // smallest), within the sweep's range.
      SuiteContext defaults = context;
      defaults.batch_size = 0;
      const std::int64_t start = std::clamp(batch_size_for(defaults, model), batches.front(), batches.back());
      const auto search = search_largest_workload_batch(context.device, make, start, batches.back());
      std::lock_guard<std::mutex> lock(mutex_);
      largest_[model] = search;
    }
  }

  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    const auto& model = level(c.params, "model");
    if (level(c.params, "experiment") == "time_to_accuracy" && !context.device.is_cuda() &&
        model_family(model) == "file" && models::resolved_image_size(model, {}) > kCpuTimeToAccuracyMaxImage) {
      return fmt::format(
          "{} takes {} px images only: epochs of the time-to-accuracy task at that size take too long on a CPU "
          "(it runs on CUDA, or on a model file of at most {} px)",
          model, models::resolved_image_size(model, {}), kCpuTimeToAccuracyMaxImage);
    }
    if (level(c.params, "experiment") != "sweep" || !context.device.is_cuda()) return std::nullopt;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = largest_.find(model);
    const std::int64_t batch = level_int(arm.levels, "batch");
    if (it == largest_.end() || batch <= it->second.largest) return std::nullopt;
    if (it->second.limited_by != "memory") {
      return fmt::format("batch {} is beyond the largest batch tried, {}: not measured", batch,
                         largest_batch_words(it->second));
    }
    return fmt::format(
        "batch {} does not fit in GPU memory: the largest that fits is {} (out-of-memory search "
        "before the run)",
        batch, it->second.largest);
  }

  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo& trial) const override {
    const auto& model = level(c.params, "model");
    if (level(c.params, "experiment") == "sweep") {
      const std::int64_t batch = level_int(arm.levels, "batch");
      auto workload =
          make_training_workload(context, TrainingSpec{.model = model, .batch_size = batch, .model_options = {}});
      // The search measured an empty device: an arm near its answer must not meet the other sweep
      // arms' kept models and inputs, so on CUDA only the arms up to a quarter of it are kept.
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = largest_.find(model);
      if (context.device.is_cuda() && (it == largest_.end() || 4 * batch > it->second.largest))
        return with_info(std::move(workload), nlohmann::json::object(), Keep::never);
      return workload;
    }
    const TimeToAccuracyRecipe r = recipe_for(context, model);
    TimeToAccuracySpec spec;
    spec.model = model;
    spec.batch_size = level_int(arm.levels, "batch");
    spec.peak_lr = level_number(arm.levels, "lr");
    spec.warmup_epochs = level_number(arm.levels, "warmup_epochs");
    spec.schedule_epochs = r.schedule_epochs;
    spec.target_accuracy = r.target_accuracy;
    spec.data = r.data;
    // Block k of every arm trains with seed + k: the arms stay paired, and a resumed run or a
    // fresh process gives each block the seed it had.
    spec.seed = context.seed + static_cast<std::uint64_t>(trial.block);
    return make_time_to_accuracy_workload(context, spec);
  }

  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      if (level(c.params, "experiment") == "sweep") {
        out.push_back(sweep_note(c, settings));
      } else {
        for (auto& line : time_to_accuracy_notes(c)) out.push_back(std::move(line));
      }
    }
    return out;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::string, BatchSearch> largest_;  // CUDA: model -> the largest batch's search
};

TIPBENCH_REGISTER_SUITE(BatchSize);

}  // namespace tipbench::suites
