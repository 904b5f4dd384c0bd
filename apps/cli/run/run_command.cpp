// `tipbench run`: runs suites on a device and writes one result document (atomically). Here: its
// flags and the order of its phases; the checks before any work (run_checks.h), the distributed
// launch (run_launch.h), --resume (run_resume.h) and the measurement (run_measure.h).
#include "cli/commands.h"

#include "cli/shared/cli_checks.h"
#include "cli/shared/model_file_setup.h"
#include "run_checks.h"
#include "run_launch.h"
#include "run_measure.h"
#include "run_options.h"
#include "run_resume.h"
#include "run_under_callgrind.h"
#include "tipbench/models/model.h"
#include "tipbench/device/slowdown.h"
#include "tipbench/results/partial_run.h"
#include "tipbench/suite/registry.h"
#include "tipbench/machine/run_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <set>

namespace tipbench::cli {

namespace {

// What a run is before it plans anything: this process's rank in a distributed launch, the
// partial file it finishes, the device.
struct RunStart {
  std::optional<distributed::RankEnv> rank_env;  // torchrun, srun or a rank --nproc started
  PartialRun partial;                            // --resume: the interrupted run
  std::optional<c10::Device> device;
  const models::ModelFile* model_file = nullptr;  // --model-file: loaded, checked and registered
};

// Reads the start; with --resume, the interrupted run's options replace o's. An exit code when
// the flags say no.
std::optional<int> read_start(RunOptions& o, const std::set<std::string>& typed, RunStart& start) {
  try {
    start.rank_env = distributed::rank_env_from_environment();
    if (!o.resume.empty()) {
      if (start.rank_env || o.nproc > 1) {
        return usage_error("--resume finishes a single-process run; a distributed run is started again");
      }
      if (auto problem = resume_options(o, typed, start.partial)) return usage_error(*problem);
    }
  } catch (const InputError& e) {
    return usage_error(e.what());
  }
  if (auto problem = suite_option_problem(selected_suites(o.suites), typed)) return usage_error(*problem);
  if (typed.contains("--rendezvous-timeout") && !start.rank_env && o.nproc <= 1) {
    return usage_error("--rendezvous-timeout applies to a distributed launch (--nproc N, torchrun or srun)");
  }
  std::string error;
  start.device = resolve_device(o.device, error);
  if (!start.device) return usage_error(error);
  if (const auto problems = model_file_problems(o); !problems.empty()) return usage_error(problems.front());
  if (o.blocks > 0 && o.max_blocks > 0) return usage_error("--max-blocks: --blocks fixes the count; give one of them");
  // Recorded absolute, so that `--resume` from another folder finds the same file.
  if (!o.model_file.empty()) o.model_file = std::filesystem::absolute(o.model_file).string();
  try {
    start.model_file = apply_process_setup(model_file_setup(o));
  } catch (const InputError& e) {
    return usage_error(e.what());
  }
  return std::nullopt;
}

// --estimate-from: the earlier run's case times, for the budget's forecast. An exit code when the
// flags or the file say no.
std::optional<int> read_case_times(const RunOptions& o, RunPlan& plan) {
  if (o.estimate_from.empty()) return std::nullopt;
  if (o.time_budget_s <= 0) return usage_error("--estimate-from forecasts a --time-budget; give one");
  try {
    plan.earlier_case_times = case_times_of(read_result_or_partial(o.estimate_from).suites);
  } catch (const InputError& e) {
    return usage_error(fmt::format("--estimate-from: {}", e.what()));
  }
  if (plan.earlier_case_times.empty()) {
    return usage_error(
        fmt::format("--estimate-from {}: it records no case times (a result from before schema 1.8)", o.estimate_from));
  }
  return std::nullopt;
}

RunPlan plan_of(const RunOptions& o, const c10::Device& device, const models::ModelFile* model_file) {
  RunPlan plan;
  plan.suites = selected_suites(o.suites);
  plan.settings = measure_settings_from(o);
  plan.context = suite_context_from(o, device);
  if (model_file) {  // every suite trains the file's model, in every process of the run
    plan.context.models = {model_file->name};
    plan.context.process_setup = model_file_setup(o);
  }
  plan.self_executable = self_executable_path();
  plan.verbose = o.verbose;
  return plan;
}

// --resume: the finished cases must come from this machine and build; they go to the plan, and
// the result takes the interrupted run's context.
std::optional<int> resume_into(Result& result, RunPlan& plan, const PartialRun& partial, const std::string& file) {
  if (auto problem = resume_context_problem(result.context, partial.result.context, file)) {
    return usage_error(*problem);
  }
  result.context = resumed_context(result.context, partial, file);
  plan.finished_cases = finished_cases_of(partial.result);
  plan.resumed_case = partial.in_progress;
  return std::nullopt;
}

int run(RunOptions o, const std::set<std::string>& typed, const std::vector<std::string>& argv) {
  RunStart start;
  if (auto code = read_start(o, typed, start)) return *code;
  const c10::Device device = *start.device;
  if (o.instructions == "callgrind") {
    if (auto problem = callgrind_problem(o, device)) return usage_error(*problem);
    if (!inside_callgrind_run() && !o.dry_run) return run_under_callgrind(argv);
  }
  if (o.nproc > 1 && !start.rank_env) {  // this process launches the ranks
    if (auto problem = launch_problem(o, device)) return usage_error(*problem);
    if (!o.dry_run) return launch_local_ranks(argv, o.nproc);
  }
  RunPlan plan = plan_of(o, device, start.model_file);
  if (auto code = read_case_times(o, plan)) return *code;
  if (o.dry_run) return dry_run(o, plan, argv);
  if (start.rank_env) {  // ranks 1..N-1 serve rank 0 here until the run ends; rank 0 goes on
    try {
      if (auto code = join_as_rank(*start.rank_env, plan, o.rendezvous_timeout_s)) return *code;
    } catch (const InputError& e) {
      return usage_error(e.what());
    }
  }
  struct ReleaseRanks {  // on every way out of rank 0's run
    ~ReleaseRanks() { end_distributed_run(); }
  } release_ranks;
  // A distributed run keeps no partial file: it is started again rather than resumed.
  if (auto code = check_outputs(o, argv, /*keeps_partial=*/!start.rank_env && o.resume.empty())) return *code;
  Result result;
  result.context = make_run_context(argv, device, plan.settings);
  if (start.model_file) result.context.model_file = model_file_record(*start.model_file);
  std::string partial_path;
  if (!start.rank_env) {
    partial_path = o.resume.empty() ? partial_path_for(o.out) : o.resume;
    if (!o.resume.empty()) {
      if (auto code = resume_into(result, plan, start.partial, o.resume)) return *code;
    }
  }
  return measure_and_write(o, plan, result, partial_path);
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

// Every option a suite declares becomes a flag of `run`, checked here and documented by its help.
void add_suite_options(CLI::App& sub, const std::shared_ptr<RunOptions>& o) {
  for (const auto& declared : declared_options()) {
    const SuiteOption option = declared.option;
    const std::string flag = "--" + option.name;
    std::string help = fmt::format("{}: {}", fmt::join(declared.suites, ", "), option.help);
    if (option.type == OptionType::flag) {
      sub.add_flag_callback(
          flag, [o, option] { o->suite_options[option.name] = "true"; }, help);
      continue;
    }
    if (!option.default_value.empty()) help += fmt::format(" (default {})", option.default_value);
    if (option.type == OptionType::choice) help += fmt::format(" {{{}}}", fmt::join(option.choices, ","));
    auto* added = sub.add_option_function<std::string>(
        flag, [o, option](const std::string& value) { o->suite_options[option.name] = value; }, help);
    added->check(not_a_flag());
    // A value given on the command line is checked whole, the default's text too (`--recipe ''`).
    // CLI11 names the flag in front of a validator's message: the problem's own "--NAME: " goes.
    added->check(CLI::Validator(
        [option](std::string& value) {
          std::string problem = option.given_problem(value);
          const std::string own_prefix = "--" + option.name + ": ";
          if (problem.starts_with(own_prefix)) problem.erase(0, own_prefix.size());
          return problem;
        },
        "", option.name));
  }
}

// What runs: suites, models, device, batch.
void add_selection_flags(CLI::App& sub, const std::shared_ptr<RunOptions>& o) {
  sub.add_option("--suite", o->suites, "Suite to run (repeatable), or all")
      ->check(CLI::IsMember(with_all(suite_names())))
      ->capture_default_str();
  sub.add_option("--model", o->models,
                 "Reference model (repeatable); default: small_cnn on CPU, resnet50 on CUDA (resnet18 with --quick)")
      ->check(CLI::IsMember(model_names()));
  sub.add_option("--model-file", o->model_file,
                 "Your own model: a TorchScript (.pt) or torch.export (.pt2) file scripts/export_model.py wrote; every "
                 "suite whose tip applies runs on it instead of --model, the others say why not (docs/own-model.md). "
                 "A TorchScript file is code: load only files you trust (a .pt2 is checked against an op allow-list)")
      ->check(not_a_flag() & CLI::ExistingFile);
  sub.add_flag("--allow-trace", o->allow_trace,
               "--model-file: accept a traced file (its training flag is baked in: BatchNorm and dropout behave as "
               "traced)");
  sub.add_option("--allow-op", o->allow_ops,
                 "--model-file of a .pt2: also let its graph call this op, NAMESPACE::OP or NAMESPACE::* (repeatable; "
                 "a .pt2 may call ATen's compute ops only: name an op only for a file you trust, docs/security.md)")
      ->check(not_a_flag());
  sub.add_option("--model-input", o->model_input,
                 "--model-file without tipbench metadata: one sample's shape C,H,W (e.g. 3,224,224)")
      ->check(not_a_flag());
  sub.add_option("--model-classes", o->model_classes, "--model-file without tipbench metadata: the logits' width K")
      ->check(not_a_flag() & whole_number(kModelClassesRange.min, kModelClassesRange.max));
  sub.add_option("--jit-optimize", o->jit_optimize,
                 "--model-file: the TorchScript graph executor's optimisation (profiling, specialisation, fusion), "
                 "recorded with the result")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  sub.add_option("--device", o->device, "auto (cuda:0 if present, else cpu), cpu, cuda or cuda:N")
      ->capture_default_str();
  sub.add_option("--batch-size", o->batch_size, "Samples per step; default: per model and device")
      ->check(not_a_flag() & whole_number(kBatchSizeRange.min, kBatchSizeRange.max));
}

// How it is measured and where the result goes.
void add_measurement_flags(CLI::App& sub, const std::shared_ptr<RunOptions>& o) {
  sub.add_flag("--quick", o->quick, "Tiny budget for CI and smoke runs (6 blocks of short trials)");
  sub.add_option("--blocks", o->blocks,
                 "A fixed number of blocks (one trial of every arm each); default: sequential, 5 to --max-blocks "
                 "(6 fixed with --quick)")
      ->check(not_a_flag() & whole_number(kBlocksRange.min, kBlocksRange.max));
  sub.add_option("--max-blocks", o->max_blocks,
                 "Sequential blocks: a case stops at the first look (5, 8, 13, 20, ...) where every throughput "
                 "comparison is precise or settled against the threshold's band, else at this many (default 20)")
      ->check(not_a_flag() & whole_number(kBlocksRange.min, kBlocksRange.max));
  sub.add_option("--precision", o->precision_pct,
                 "A comparison is precise when its interval's half-width is at most PCT percent of its ratio "
                 "(default 0.5)")
      ->check(real_number(kPrecisionPctRange.min, kPrecisionPctRange.max));
  sub.add_option("--trial-time", o->trial_time_s,
                 "Seconds each trial times at least (default 0.5, 0.15 with --quick); at least 5 steps")
      ->check(real_number(kTrialTimeRange.min, kTrialTimeRange.max));
  sub.add_option("--time-budget", o->time_budget_s,
                 "Wall time the run's cases share (15m, 90s, 1h30m): each case gets what is left over the cases "
                 "left and stops before the block that would overrun it (after at least 3 blocks); the result "
                 "says what was cut")
      ->transform(duration(kTimeBudgetRange.min, kTimeBudgetRange.max));
  sub.add_option("--estimate-from", o->estimate_from,
                 "--time-budget: an earlier result (or partial file) of these cases; their recorded times say up "
                 "front which cases the budget will likely cut or never start")
      ->check(not_a_flag());
  sub.add_flag("--fresh-trials", o->fresh_trials,
               "Build every trial's workload anew (model, optimizer, warm-up), as before kept workloads; default: an "
               "in-process arm keeps its workload between its trials of a case and re-warms it");
  sub.add_option("--threshold", o->threshold_pct, "Practical threshold for a verdict, in percent (default 2)")
      ->check(real_number(kThresholdPctRange.min, kThresholdPctRange.max));
  sub.add_option("--out", o->out,
                 "Result file; default results/runs/<UTC timestamp>-<host>.json. Finished cases are kept in "
                 "<out>.partial while the run goes on")
      ->check(not_a_flag());
  sub.add_option("--seed", o->seed, "Seed for weights, inputs and block order")
      ->check(seed_value())
      ->capture_default_str();
  sub.add_option("--inject-slowdown", o->inject_slowdown_pct,
                 "TEST KNOB: slow every timed step down by PCT percent on purpose, to calibrate the "
                 "regression gate (recorded in the result; never a real measurement)")
      ->check(real_number(kInjectSlowdownPctRange.min, kInjectSlowdownPctRange.max));
  sub.add_option("--inject-slowdown-op", o->inject_slowdown_op,
                 "TEST KNOB: with --inject-slowdown, spend the delay inside this ATen op (e.g. aten::addmm), at its "
                 "first call in each step, instead of after the step: a known cause for --explain to name")
      ->check([](const std::string& v) {
        if (!is_op_name(v)) return std::string("not an op name like aten::addmm");
        if (!detail::op_is_registered(v)) {
          return std::string(
              "no op of that name is registered with this LibTorch's dispatcher (an op's name has no "
              "overload: aten::add, not aten::add.Tensor)");
        }
        return std::string();
      })
      ->needs("--inject-slowdown");
  sub.add_option("--inject-extra-ops", o->inject_extra_ops,
                 "TEST KNOB: after every step, N more calls of a small ATen op (aten::add of 16 elements): a known "
                 "amount of added work, to calibrate the count gate (recorded in the result; never a real "
                 "measurement)")
      ->check(not_a_flag() & whole_number(kInjectExtraOpsRange.min, kInjectExtraOpsRange.max));
}

// The distributed launch (run_launch.h): run's own flags, not a suite's (docs/cli.md).
void add_launch_flags(CLI::App& sub, const std::shared_ptr<RunOptions>& o) {
  sub.add_option("--nproc", o->nproc,
                 "data_parallel: launch N local ranks (one per GPU, or per CPU core) and reap them; ignored "
                 "under torchrun or srun, whose variables say the rank (docs/distributed.md)")
      ->check(not_a_flag() & whole_number(kNprocRange.min, kNprocRange.max))
      ->capture_default_str();
  sub.add_flag("--oversubscribe", o->oversubscribe,
               fmt::format("data_parallel on a CPU: allow more ranks than cores, up to {} per core",
                           kRanksPerCoreOversubscribed));
}

// Profiling, the suites' own flags, resuming, checking only, and the ranks' rendezvous.
void add_control_flags(CLI::App& sub, const std::shared_ptr<RunOptions>& o) {
  sub.add_option("--profile", o->profile_dir,
                 "After each arm's last timed trial, profile a few more steps with Kineto and write a Chrome trace "
                 "per arm into DIR (open in Perfetto); the result and the HTML report name the top ops. Never timed")
      ->check(not_a_flag());
  auto* explain = sub.add_flag(
      "--explain", o->explain,
      "After each trial's timed steps, profile a few more (never timed) and break them down by phase, ATen op "
      "and CUDA kernel, with the memory peak's composition: each comparison then says which ops made the "
      "difference (docs/explain.md)");
  sub.add_option("--explain-steps", o->explain_steps, "Steps each trial profiles for --explain")
      ->check(whole_number(kExplainStepsRange.min, kExplainStepsRange.max))
      ->needs(explain)
      ->capture_default_str();
  sub.add_option(
         "--count-steps", o->count_steps,
         "Counted work: after each arm's first trial, count the ATen ops, allocations and (CUDA) kernels, "
         "copies and syncs of this many more steps, never timed; 0: off (docs/measurement.md, \"Counted work\")")
      ->check(whole_number(0, kCountStepsRange.max))
      ->capture_default_str();
  sub.add_option("--instructions", o->instructions,
                 "Counted CPU instructions per step, in steps of their own on one intra-op thread: auto counts them "
                 "with perf_event where the CPU's PMU is open to this process; callgrind runs this whole run under "
                 "Valgrind's Callgrind (one block of short trials: the times are Callgrind's, the counts exact; a CPU "
                 "only); off")
      ->check(CLI::IsMember({"auto", "callgrind", "off"}))
      ->capture_default_str();
  add_suite_options(sub, o);
  sub.add_option("--resume", o->resume,
                 "Finish an interrupted run from its partial file (<out>.partial), with its options; flags given "
                 "with it must agree with them. Paths it records outside this folder (--out, --model-file, "
                 "--profile) are taken only when given here too")
      ->check(not_a_flag() & CLI::ExistingFile);
  sub.add_flag("--force", o->force,
               "Start although <out>.partial holds the finished cases of an interrupted run (they are lost; "
               "--resume finishes it instead)");
  sub.add_flag("--verbose", o->verbose,
               "Print a failed arm's whole error (C++ backtrace included), not only its first line");
  sub.add_flag("--dry-run", o->dry_run,
               "Check every flag, the device, the suites' options and every output, then exit (0, or 2 for bad "
               "input) without measuring or writing anything");
  sub.add_option("--rendezvous-timeout", o->rendezvous_timeout_s,
                 "A distributed launch (--nproc, torchrun, srun): how long a rank waits at the start for the "
                 "rendezvous store and for every rank to join, in seconds")
      ->check(not_a_flag() & whole_number(1, 86400))
      ->capture_default_str();
}

// The flags typed, but for those that do not measure: with --resume they must agree with the run's,
// and a suite's own flag needs a selected suite that declares it.
std::set<std::string> typed_flags(const CLI::App& sub) {
  std::set<std::string> typed;
  for (const auto* option : sub.get_options()) {
    const auto name = option->get_name();
    if (option->count() > 0 && name != "--resume" && name != "--force" && name != "--verbose" && name != "--dry-run" &&
        name != "--help" && name != "--time-budget" && name != "--estimate-from") {
      typed.insert(name);
    }
  }
  return typed;
}

}  // namespace

Command add_run_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto* sub = app.add_subcommand("run", "Run suites and write a result JSON");
  auto o = std::make_shared<RunOptions>();
  o->suite_options = default_suite_options();
  add_selection_flags(*sub, o);
  add_measurement_flags(*sub, o);
  add_launch_flags(*sub, o);
  add_control_flags(*sub, o);
  return {sub, [o, argv, sub] { return run(*o, typed_flags(*sub), argv); }};
}

}  // namespace tipbench::cli
