// Tip: set the CPU thread count on purpose. LibTorch's intra-op pool defaults to the physical
// cores (or OMP_NUM_THREADS); more threads than cores, or threads that share cores with data
// workers or other jobs, thrash. A training step on the CPU with the intra-op threads set to
// 1, 2, 4, ... up to the cores this process may use (taskset and cgroups count), each beside
// LibTorch's default (the baseline; a count equal to it is not repeated). --quick: 1 and the
// core count only. The suite's note names the fastest count. CPU only: on a GPU the step's work
// is not on these threads. The count is process-wide: the workload puts the default back.
#include "common/recipe.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/data/system.h"
#include "tipbench/suite/registry.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tipbench::suites {

namespace {

constexpr const char* kDefault = "default";

// 1, 2, 4, ... below the cores, then the cores; --quick: 1 and the cores. Without `skip`.
std::vector<int> thread_counts(int cores, bool quick, int skip) {
  std::set<int> counts{1, cores};
  if (!quick) {
    for (int t = 2; t < cores; t *= 2) counts.insert(t);
  }
  counts.erase(skip);
  return {counts.begin(), counts.end()};
}

std::string best_count_note(const CaseResult& c) {
  const ArmResult* best = nullptr;
  for (const auto& arm : c.arms) {
    if (arm.status != ArmStatus::ok) continue;
    if (best == nullptr || arm.throughput_samples_per_s.median > best->throughput_samples_per_s.median) best = &arm;
  }
  if (best == nullptr) return "";
  const auto threads = [](const ArmResult& a) { return a.info.value("intra_op_threads", 0); };
  std::string text = fmt::format("{}: the fastest intra-op thread count was {} ({:.1f} samples/s median)", c.name,
                                 threads(*best), best->throughput_samples_per_s.median);
  if (best->baseline) return text + ", LibTorch's default";
  for (const auto& cmp : c.comparisons) {
    if (cmp.treatment == best->arm && cmp.metric == "throughput_samples_per_s") {
      text +=
          fmt::format(", x{:.2f} [{:.2f}, {:.2f}] the default's {} threads ({})", cmp.estimate.ratio,
                      cmp.estimate.ci_low, cmp.estimate.ci_high, threads(c.arms[0]), stats::verdict_words(cmp.verdict));
    }
  }
  return text;
}

}  // namespace

class CpuThreads final : public Suite {
 public:
  std::string name() const override { return "cpu_threads"; }
  std::string description() const override {
    return "LibTorch's intra-op threads: the default vs 1, 2, 4, ... up to the cores, for a training step (CPU)";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"001, 003", "too many CPU threads thrash"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    const int cores = data::available_cores();
    std::vector<ArmSpec> arms{{kDefault, {{"threads", kDefault}}}};
    for (int t : thread_counts(cores, context.quick, at::get_num_threads())) {
      arms.push_back({fmt::format("t{}", t), {{"threads", std::to_string(t)}}});
    }
    return training_cases(context, arms, {{"cores", {std::to_string(cores)}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec&, const ArmSpec&) const override {
    if (context.device.is_cpu()) return std::nullopt;
    return "the intra-op threads run CPU kernels; this run's training step runs on " + context.device.str();
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const int before = at::get_num_threads();
    const auto& threads = level(arm.levels, "threads");
    if (threads != kDefault) at::set_num_threads(std::stoi(threads));
    auto restore = [before] { at::set_num_threads(before); };
    try {
      return with_restore(make_training_workload(context, training_spec(c)), restore,
                          {{"intra_op_threads", at::get_num_threads()}, {"default_intra_op_threads", before}});
    } catch (...) {
      restore();
      throw;
    }
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      if (auto note = best_count_note(c); !note.empty()) out.push_back(note);
    }
    return out;
  }
};

TIPBENCH_REGISTER_SUITE(CpuThreads);

namespace {
// One ingredient per thread count the full plan of this machine has (1, 2, 4, ... the cores): the
// arm names depend on the cores, so the declarations do too. The count is process-wide: put back.
Ingredient threads(int count) {
  return {.tip = "cpu_threads",
          .arm = fmt::format("t{}", count),
          .python = {.setup = {fmt::format("torch.set_num_threads({})", count)}},
          .apply = [count](const SuiteContext&, TrainingSpec&) -> Restore {
            const int before = at::get_num_threads();
            at::set_num_threads(count);
            return [before] { at::set_num_threads(before); };
          },
          .load_sensitive = "a thread count's win depends on how many cores other processes leave free"};
}

[[maybe_unused]] const bool kThreadIngredients = [] {
  for (int count : thread_counts(data::available_cores(), /*quick=*/false, /*skip=*/0)) {
    register_ingredient(threads(count));
  }
  return true;
}();
}  // namespace

}  // namespace tipbench::suites
