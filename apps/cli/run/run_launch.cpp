#include "run_launch.h"

#include "distributed/launcher.h"
#include "distributed/run_role.h"
#include "tipbench/data/system.h"
#include "tipbench/machine/run_context.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <chrono>

namespace tipbench::cli {

namespace {

// One rank per device; on a CPU one per core, or kRanksPerCoreOversubscribed per core with
// --oversubscribe. Hundreds of ranks on two cores end in the kernel's OOM killer, not a result.
std::optional<std::string> rank_count_problem(const RunOptions& o, const c10::Device& device) {
  if (device.is_cuda()) {
    const auto gpus = static_cast<int>(torch::cuda::device_count());
    if (o.nproc <= gpus) return std::nullopt;
    return fmt::format("--nproc {}: one rank per GPU, and {} CUDA device(s) are visible", o.nproc, gpus);
  }
  const int cores = data::available_cores();
  const int limit = o.oversubscribe ? kRanksPerCoreOversubscribed * cores : cores;
  if (o.nproc <= limit) return std::nullopt;
  if (o.oversubscribe) {
    return fmt::format(
        "--nproc {}: --oversubscribe allows at most {} ranks per core, {} on the {} core(s) this "
        "process may use",
        o.nproc, kRanksPerCoreOversubscribed, limit, cores);
  }
  return fmt::format(
      "--nproc {}: one rank per core, and this process may use {} core(s); --oversubscribe allows "
      "up to {} per core ({})",
      o.nproc, cores, kRanksPerCoreOversubscribed, kRanksPerCoreOversubscribed * cores);
}

}  // namespace

std::optional<std::string> launch_problem(const RunOptions& o, const c10::Device& device) {
  if (o.suites != std::vector<std::string>{distributed::kDistributedSuite}) {
    return fmt::format("--nproc {} runs only --suite {}", o.nproc, distributed::kDistributedSuite);
  }
  return rank_count_problem(o, device);
}

int launch_local_ranks(const std::vector<std::string>& argv, int nproc) {
  return distributed::launch_local_ranks({.executable = self_executable_path(), .argv = argv, .nproc = nproc});
}

// What every rank must agree on: the suites, what they train and how, and the measurement. Not
// --out (only rank 0 writes) nor the model file's path (nodes may hold their own copies).
nlohmann::json run_identity(const RunPlan& plan) {
  std::vector<std::string> suites;
  for (const auto* s : plan.suites) suites.push_back(s->name());
  return {{"suites", suites},
          {"device", plan.context.device.type() == c10::kCUDA ? "cuda" : plan.context.device.str()},
          {"models", plan.context.models},
          {"batch", plan.context.batch_size},
          {"seed", plan.context.seed},
          {"quick", plan.context.quick},
          {"options", plan.context.options},
          {"settings", plan.settings}};
}

std::optional<int> join_as_rank(const distributed::RankEnv& env, const RunPlan& plan, int rendezvous_timeout_s) {
  return distributed::join_distributed_run(env, plan.suites, plan.context, std::chrono::seconds(rendezvous_timeout_s),
                                           run_identity(plan));
}

void end_distributed_run() { distributed::end_distributed_run(); }

}  // namespace tipbench::cli
