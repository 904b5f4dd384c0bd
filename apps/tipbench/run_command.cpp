// `tipbench run`: runs suites on a device and writes one result document (atomically).
#include "tipbench/commands.h"

#include "distributed/launcher.h"
#include "distributed/run_role.h"
#include "tipbench/exit_codes.h"
#include "tipbench/models/model.h"
#include "tipbench/registry.h"
#include "tipbench/reports/console.h"
#include "tipbench/reports/format.h"
#include "tipbench/run_context.h"
#include "tipbench/runner.h"

#include <fmt/format.h>
#include <torch/cuda.h>

#include <optional>

namespace tipbench::cli {

namespace {

struct RunOptions {
  std::vector<std::string> suites{"all"};
  std::vector<std::string> models;
  std::string device = "auto";
  std::int64_t batch_size = 0;
  bool quick = false;
  int blocks = 0;  // 0: the preset's
  double threshold_pct = 0;
  std::string out;
  std::uint64_t seed = 0;
  double inject_slowdown_pct = 0;  // gate-calibration test knob (docs/gate.md)
  std::string data_dir;  // the dataloader suite's dataset; "": the cache's, made on first use
  bool loader_only = false;
  std::string corrupt_policy = "skip";
  int nproc = 1;           // > 1: launch this many local ranks (data_parallel)
  double bucket_mb = 25;   // data_parallel: gradient bucket size
};

// "auto" is cuda:0 when a CUDA device exists, else cpu. An explicit cuda without a device is an
// error, not a silent fallback: a CPU number must never pass for a GPU one.
std::optional<c10::Device> resolve_device(const std::string& name, std::string& error) {
  const bool have_cuda = torch::cuda::is_available();
  if (name == "auto") return have_cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  try {
    c10::Device device(name);
    if (!device.is_cpu() && !device.is_cuda()) throw std::invalid_argument("unsupported");
    if (device.is_cuda() && !have_cuda) {
      error = fmt::format("--device {}: no CUDA device is available here (use --device cpu or auto)", name);
      return std::nullopt;
    }
    if (device.is_cuda() && !device.has_index()) device.set_index(0);
    if (device.is_cuda() && device.index() >= static_cast<int>(torch::cuda::device_count())) {
      error = fmt::format("--device {}: only {} CUDA device(s) present", name, torch::cuda::device_count());
      return std::nullopt;
    }
    return device;
  } catch (const std::exception&) {
    error = fmt::format("--device {}: expected auto, cpu, cuda or cuda:N", name);
    return std::nullopt;
  }
}

std::vector<const Suite*> selected_suites(const std::vector<std::string>& names) {
  if (std::find(names.begin(), names.end(), "all") != names.end()) return all_suites();
  std::vector<const Suite*> out;
  for (const auto& n : names) {
    if (auto* s = find_suite(n); s && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

MeasureSettings settings_from(const RunOptions& o) {
  MeasureSettings s = o.quick ? quick_settings() : MeasureSettings{};
  if (o.blocks > 0) s.blocks = o.blocks;
  if (o.threshold_pct > 0) s.practical_threshold = o.threshold_pct / 100;
  s.seed = o.seed;
  s.inject_slowdown_pct = o.inject_slowdown_pct;
  return s;
}

bool any_failed(const std::vector<SuiteResult>& suites) {
  for (const auto& s : suites)
    for (const auto& c : s.cases)
      for (const auto& a : c.arms)
        if (a.status == ArmStatus::failed) return true;
  return false;
}

int run(const RunOptions& o, const std::vector<std::string>& argv) {
  // A distributed launch: a launcher's variables (torchrun, srun, our own --nproc) make this
  // process one rank; without them, --nproc N makes it the launcher of N local ranks.
  std::optional<distributed::RankEnv> rank_env;
  try {
    rank_env = distributed::rank_env_from_environment();
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  }
  std::string error;
  const auto device = resolve_device(o.device, error);
  if (!device) {
    fmt::print(stderr, "error: {}\n", error);
    return exit_code::usage;
  }
  if (o.nproc > 1 && !rank_env) {
    if (o.suites != std::vector<std::string>{distributed::kDistributedSuite}) {
      fmt::print(stderr, "error: --nproc {} runs only --suite {}\n", o.nproc, distributed::kDistributedSuite);
      return exit_code::usage;
    }
    if (device->is_cuda() && o.nproc > static_cast<int>(torch::cuda::device_count())) {
      fmt::print(stderr, "error: --nproc {}: one rank per GPU, and {} CUDA device(s) are visible\n", o.nproc,
                 torch::cuda::device_count());
      return exit_code::usage;
    }
    return distributed::launch_local_ranks({.executable = self_executable_path(), .argv = argv, .nproc = o.nproc});
  }
  RunPlan plan;
  plan.suites = selected_suites(o.suites);
  plan.settings = settings_from(o);
  plan.context = {.device = *device, .models = o.models, .batch_size = o.batch_size,
                  .seed = o.seed, .quick = o.quick, .data_dir = o.data_dir,
                  .loader_only = o.loader_only, .corrupt_policy = o.corrupt_policy,
                  .bucket_mb = o.bucket_mb};
  plan.self_executable = self_executable_path();
  if (rank_env) {  // ranks 1..N-1 serve rank 0 here until the run ends; rank 0 goes on
    try {
      if (auto code = distributed::join_distributed_run(*rank_env, plan.suites, plan.context)) return *code;
    } catch (const InputError& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      return exit_code::usage;
    }
  }
  // Releases the other ranks on every way out of rank 0's run.
  struct EndDistributedRun {
    ~EndDistributedRun() { distributed::end_distributed_run(); }
  } release_ranks;

  Result result;
  result.context = make_run_context(argv, *device, plan.settings);
  const std::string out = o.out.empty() ? fmt::format("results/runs/{}-{}.json", compact_utc_timestamp(),
                                                      result.context.hostname)
                                        : o.out;
  fmt::print(stderr, "tipbench {}: {} suite(s) on {} ({}), {} blocks{}\n", result.context.tipbench_version,
             plan.suites.size(), device->str(), result.context.fingerprint_slug, plan.settings.blocks,
             o.quick ? ", quick" : "");
  for (const auto& w : result.context.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (const auto banner = reports::injected_slowdown_banner(result); !banner.empty()) {
    fmt::print(stderr, "{}\n", banner);
  }

  Progress progress(Progress::stderr_is_tty());
  try {
    result.suites = run_suites(plan, progress);
    distributed::end_distributed_run();  // the other ranks exit while rank 0 writes
  } catch (const InputError& e) {  // bad input found while staging or measuring: nothing written
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  }
  try {
    write_result_atomically(result, out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot write the result: {}\n", e.what());
    return exit_code::internal;
  }
  reports::print_run_summary(result, stdout);
  fmt::print("\nwrote {}\n", out);
  return any_failed(result.suites) ? exit_code::failed : exit_code::ok;
}

std::vector<std::string> with_all(std::vector<std::string> names) {
  names.push_back("all");
  return names;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : models::available_models()) names.push_back(m.name);
  return names;
}

}  // namespace

Command add_run_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto* sub = app.add_subcommand("run", "Run suites and write a result JSON");
  auto o = std::make_shared<RunOptions>();
  sub->add_option("--suite", o->suites, "Suite to run (repeatable), or all")
      ->check(CLI::IsMember(with_all(suite_names())))
      ->capture_default_str();
  sub->add_option("--model", o->models,
                  "Reference model (repeatable); default: small_cnn on CPU, resnet50 on CUDA (resnet18 with --quick)")
      ->check(CLI::IsMember(model_names()));
  sub->add_option("--device", o->device, "auto (cuda:0 if present, else cpu), cpu, cuda or cuda:N")
      ->capture_default_str();
  sub->add_option("--batch-size", o->batch_size, "Samples per step; default: per model and device")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--quick", o->quick, "Tiny budget for CI and smoke runs (8 blocks of short trials)");
  sub->add_option("--blocks", o->blocks, "Blocks (one trial of every arm each); default 10, 8 with --quick")
      ->check(CLI::Range(1, 10000));
  sub->add_option("--threshold", o->threshold_pct, "Practical threshold for a verdict, in percent (default 2)")
      ->check(CLI::Range(0.01, 100.0));
  sub->add_option("--out", o->out, "Result file; default results/runs/<UTC timestamp>-<host>.json");
  sub->add_option("--seed", o->seed, "Seed for weights, inputs and block order")->capture_default_str();
  sub->add_option("--inject-slowdown", o->inject_slowdown_pct,
                  "TEST KNOB: slow every timed step down by PCT percent on purpose, to calibrate the "
                  "regression gate (recorded in the result; never a real measurement)")
      ->check(CLI::Range(0.0, 1000.0));
  sub->add_option("--data", o->data_dir,
                  "Dataset directory for the dataloader suite (tipbench data make); default: one in the cache "
                  "directory, made on first use");
  sub->add_flag("--loader-only", o->loader_only,
                "dataloader suite: fetch batches with no model (the data-loading ceiling) and compare with the "
                "model's consumption");
  sub->add_option("--corrupt-policy", o->corrupt_policy,
                  "dataloader suite: a corrupt or missing file is skipped (counted) or fails the run (exit 2)")
      ->check(CLI::IsMember({"skip", "fail"}))
      ->capture_default_str();
  sub->add_option("--nproc", o->nproc,
                  "data_parallel: launch N local ranks (one per device) and reap them; ignored under torchrun "
                  "or srun, whose variables say the rank (docs/distributed.md)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  sub->add_option("--bucket-mb", o->bucket_mb, "data_parallel: gradient bucket size in MB (DDP's default 25)")
      ->check(CLI::Range(0.001, 4096.0))
      ->capture_default_str();
  return {sub, [o, argv] { return run(*o, argv); }};
}

}  // namespace tipbench::cli
