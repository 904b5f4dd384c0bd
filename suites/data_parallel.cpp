// Tip: for several devices prefer DistributedDataParallel (one process per device, bucketed
// all-reduce overlapped with backward) over DataParallel (one process driving all devices).
// Baseline: `single`, one device at the per-device batch (the scaling reference). Treatments:
// `dp` (DataParallel over every GPU), `ddp` (one rank per device: PyTorch's DDP, c10d::Reducer
// with DDP's defaults, on NCCL on GPUs, Gloo on CPUs; bucketed all-reduce launched from autograd
// hooks) and `ddp_no_overlap` (the same Reducer with one bucket: one all-reduce after backward).
// The ranks come from the launch: `tipbench run --suite data_parallel --nproc N`, torchrun or
// srun (docs/distributed.md); a plain run is world size 1. Rank 0 runs the harness and its
// ddp workloads step every rank together; `single` and `dp` run on rank 0 alone.
#include "common/training.h"
#include "distributed/ddp_workload.h"
#include "distributed/dp_workload.h"
#include "distributed/session.h"
#include "tipbench/suite/registry.h"
#include "tipbench/statistics/stats.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>
#include <torch/cuda.h>

namespace tipbench::suites {

namespace {

int world_size() {
  const auto* session = distributed::Session::current();
  return session ? session->world_size() : 1;
}

// ddp over ddp_no_overlap by the harness's comparison rule (compare_arms: the paired ratio, its
// bootstrap interval and verdict); with too few blocks for it, the ratio of medians alone.
std::string overlap_effect(const ArmResult& with, const ArmResult& without, const MeasureSettings& settings) {
  const auto k = compare_arms(with, without, trial_throughput(), settings);
  if (!k) {
    return fmt::format("{:+.1f}% (ratio of medians; too few blocks for an interval)",
                       100 * (with.throughput_samples_per_s.median / without.throughput_samples_per_s.median - 1));
  }
  const auto& e = k->estimate;
  return fmt::format("{:+.1f}% (95% CI {:+.1f}% to {:+.1f}%, {} blocks: {}{})", 100 * (e.ratio - 1),
                     100 * (e.ci_low - 1), 100 * (e.ci_high - 1), e.blocks, stats::verdict_words(k->verdict),
                     k->noisy ? " [noisy]" : "");
}

double metric_median(const ArmResult& a, const std::string& key) {
  const auto it = a.metrics.find(key);
  return it == a.metrics.end() ? 0 : it->second.median;
}

const SuiteOption kBucketMbOption{.name = "bucket-mb",
                                  .type = OptionType::number,
                                  .default_value = "25",
                                  .help =
                                      "gradient bucket size in MB, DDP's bucket_cap_mb; the default 25 is DDP's "
                                      "default: 25 MB after a first bucket of 1 MB",
                                  .min = 0.001,
                                  .max = 4096};

}  // namespace

class DataParallel final : public Suite {
 public:
  std::string name() const override { return "data_parallel"; }
  std::string description() const override {
    return "multi-device training: one device vs DataParallel vs DistributedDataParallel (c10d, bucketed "
           "all-reduce with and without overlap)";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000-004",
                       "DistributedDataParallel (one process per GPU, bucketed all-reduce overlapping "
                       "backward) is faster than DataParallel"};
  }
  // Throughput against the ranks an arm trains on, beside ideal linear scaling.
  ChartKind chart() const override { return ChartKind::scaling; }
  std::vector<SuiteOption> options() const override { return {kBucketMbOption}; }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    // batch: per device. world_size: the devices an arm trains on, so a report can draw the scaling curve.
    const std::string ranks = std::to_string(world_size());
    const std::string gpus = std::to_string(context.device.is_cuda() ? torch::cuda::device_count() : 0);
    return training_cases(
        context,
        {{"single", {{"mode", "single"}, {"world_size", "1"}}},
         {"dp", {{"mode", "data_parallel"}, {"world_size", gpus}}},
         {"ddp", {{"mode", "ddp"}, {"overlap", "true"}, {"world_size", ranks}}},
         {"ddp_no_overlap", {{"mode", "ddp"}, {"overlap", "false"}, {"world_size", ranks}}}},
        {{"ranks", {ranks}}, {"bucket_mb", {fmt::format("{:g}", kBucketMbOption.number(context.options))}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    if (arm.name != "dp") return std::nullopt;
    if (!context.device.is_cuda()) return "DataParallel needs at least 2 CUDA GPUs; this run is on the CPU";
    const auto gpus = torch::cuda::device_count();
    if (gpus < 2) return fmt::format("DataParallel needs at least 2 GPUs; {} visible", gpus);
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo& trial) const override {
    TrainingSpec spec = training_spec(c);
    const std::string mode = level(arm.levels, "mode");
    if (mode == "single") return make_training_workload(context, spec);
    if (mode == "data_parallel") return distributed::make_dp_workload(context, spec);
    // The default 25 is DDP's own default (bucket_cap_mb=None: 25 MB after a first bucket of
    // 1 MB); another size applies to every bucket, as DDP's bucket_cap_mb does.
    const double bucket_mb = kBucketMbOption.number(context.options);
    const bool ddp_default = bucket_mb == std::stod(kBucketMbOption.default_value);
    distributed::DdpSpec ddp{.training = spec,
                             .ddp = {.overlap = level(arm.levels, "overlap") == "true",
                                     .bucket_mb = ddp_default ? std::nullopt : std::optional<double>(bucket_mb)},
                             .trial = trial};
    return distributed::make_ddp_workload(context, c, arm, ddp);
  }
  // Scaling efficiency = throughput(N ranks) / (N x throughput(single)), from the paired
  // throughput ratio and its bootstrap interval; and what overlap bought.
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      const int n = static_cast<int>(level_int(c.params, "ranks"));
      const auto* single = find_arm(c, "single");
      for (const std::string arm : {"ddp", "ddp_no_overlap"}) {
        const auto* a = find_arm(c, arm);
        if (a == nullptr || single == nullptr || a->status != ArmStatus::ok || single->status != ArmStatus::ok ||
            single->throughput_samples_per_s.median <= 0) {
          continue;
        }
        // The paired ratio's bootstrap interval when there are enough blocks, else the medians.
        const auto* k = find_comparison(c, arm);
        const std::string efficiency =
            k ? fmt::format("{:.2f} (95% CI {:.2f}-{:.2f})", k->estimate.ratio / n, k->estimate.ci_low / n,
                            k->estimate.ci_high / n)
              : fmt::format("{:.2f} (ratio of medians; too few blocks for an interval)",
                            a->throughput_samples_per_s.median / single->throughput_samples_per_s.median / n);
        out.push_back(
            fmt::format("{} {}: scaling efficiency {} over {} rank(s) on {} node(s); exposed communication {:.1f}% of "
                        "the step on rank 0 (worst rank {:.1f}%)",
                        c.name, arm, efficiency, n, a->info.value("nodes", 1), 100 * metric_median(*a, "comm_share"),
                        100 * metric_median(*a, "comm_share_max")));
      }
      const auto* with = find_arm(c, "ddp");
      const auto* without = find_arm(c, "ddp_no_overlap");
      if (with && without && with->status == ArmStatus::ok && without->status == ArmStatus::ok &&
          without->throughput_samples_per_s.median > 0) {
        const int buckets = with->info.value("buckets", 0);
        out.push_back(
            fmt::format("{}: overlapping the all-reduce with backward changed throughput by {} ({} bucket(s) of "
                        "<= {} MB{})",
                        c.name, overlap_effect(*with, *without, settings), buckets, level(c.params, "bucket_mb"),
                        buckets <= 1 ? "; one bucket cannot overlap: try a smaller --bucket-mb" : ""));
      }
      if (n == 1) out.push_back(c.name + ": world size 1: the ddp arms measure the machinery's overhead only");
    }
    return out;
  }
};

TIPBENCH_REGISTER_SUITE(DataParallel);

}  // namespace tipbench::suites
