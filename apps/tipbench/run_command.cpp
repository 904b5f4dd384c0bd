// `tipbench run`: runs suites on a device and writes one result document (atomically).
#include "tipbench/commands.h"

#include "cli_checks.h"
#include "distributed/launcher.h"
#include "distributed/run_role.h"
#include "run_options.h"
#include "run_resume.h"
#include "tipbench/atomic_file.h"
#include "tipbench/data/system.h"
#include "tipbench/error_text.h"
#include "tipbench/exit_codes.h"
#include "tipbench/interrupt_notice.h"
#include "tipbench/json_number.h"
#include "tipbench/partial_run.h"
#include "tipbench/models/model.h"
#include "tipbench/registry.h"
#include "tipbench/reports/console.h"
#include "tipbench/reports/format.h"
#include "tipbench/run_context.h"
#include "tipbench/runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace tipbench::cli {

namespace {

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
    const Suite* s = find_suite(n);
    if (s == nullptr) throw InputError(fmt::format("'{}' is not a suite", n));  // never dropped silently
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

// A byte string as a message can show it: bytes outside printable ASCII as \xNN.
std::string printable(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

// A suite's own flag (`--bucket-mb`) given while no selected suite declares it would be ignored
// without a word: refused, naming the suites that declare it.
std::optional<std::string> suite_option_problem(const std::vector<const Suite*>& selected,
                                                const std::set<std::string>& typed) {
  for (const auto& declared : declared_options()) {
    if (!typed.contains("--" + declared.option.name)) continue;
    const bool applies = std::any_of(selected.begin(), selected.end(), [&](const Suite* s) {
      return std::find(declared.suites.begin(), declared.suites.end(), s->name()) != declared.suites.end();
    });
    if (!applies) {
      return fmt::format("--{} is an option of {}, which this run does not select (add --suite {})",
                         declared.option.name, fmt::join(declared.suites, ", "), declared.suites.front());
    }
  }
  return std::nullopt;
}

// A failed or invalid arm makes the run's exit code 1 (the result is still written).
bool any_unusable(const std::vector<SuiteResult>& suites) {
  for (const auto& s : suites)
    for (const auto& c : s.cases)
      for (const auto& a : c.arms)
        if (a.status == ArmStatus::failed || a.status == ArmStatus::invalid) return true;
  return false;
}

int usage_error(const std::string& message) {
  fmt::print(stderr, "error: {}\n", message);
  return exit_code::usage;
}

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
    return fmt::format("--nproc {}: --oversubscribe allows at most {} ranks per core, {} on the {} core(s) this "
                       "process may use",
                       o.nproc, kRanksPerCoreOversubscribed, limit, cores);
  }
  return fmt::format("--nproc {}: one rank per core, and this process may use {} core(s); --oversubscribe allows "
                     "up to {} per core ({})",
                     o.nproc, cores, kRanksPerCoreOversubscribed, kRanksPerCoreOversubscribed * cores);
}

// --dry-run: what a run checks before its first trial (the flags, the device, the suites'
// options, every output it would write, the command line as JSON text), then one line and exit 0
// with nothing measured or written. The gate asks each of its binaries this before block 0.
int dry_run(RunOptions o, const RunPlan& plan, const c10::Device& device, const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (!is_valid_utf8(argv[i])) {
      return usage_error(fmt::format("argument {} ('{}') is not valid UTF-8: a result records its command line as "
                                     "JSON text; rename the path",
                                     i, abbreviated(printable(argv[i]))));
    }
  }
  if (o.out.empty()) o.out = fmt::format("results/runs/{}-{}.json", compact_utc_timestamp(), host_name());
  if (!output_file_writable("--out", o.out)) return exit_code::usage;
  if (!o.profile_dir.empty() && !output_dir_writable("--profile", o.profile_dir)) return exit_code::usage;
  if (o.resume.empty()) {
    if (auto problem = output_file_problem(partial_path_for(o.out))) {
      return usage_error(fmt::format("{}: cannot keep finished cases there: {}", abbreviated(partial_path_for(o.out)), *problem));
    }
  }
  std::size_t cases = 0;
  for (const Suite* s : plan.suites) cases += s->cases(plan.context).size();
  fmt::print("run --dry-run: ok: {} suite(s), {} case(s) on {}; nothing measured\n", plan.suites.size(), cases,
             device.str());
  return exit_code::ok;
}

int run(RunOptions o, const std::set<std::string>& typed, const std::vector<std::string>& argv) {
  // A distributed launch: a launcher's variables (torchrun, srun, our own --nproc) make this
  // process one rank; without them, --nproc N makes it the launcher of N local ranks.
  std::optional<distributed::RankEnv> rank_env;
  PartialRun partial;
  try {
    rank_env = distributed::rank_env_from_environment();
    if (!o.resume.empty()) {
      if (rank_env || o.nproc > 1) return usage_error("--resume finishes a single-process run; a distributed run is started again");
      if (auto problem = resume_options(o, typed, partial)) return usage_error(*problem);
    }
  } catch (const InputError& e) {
    return usage_error(e.what());
  }
  if (auto problem = suite_option_problem(selected_suites(o.suites), typed)) return usage_error(*problem);
  if (typed.contains("--rendezvous-timeout") && !rank_env && o.nproc <= 1) {
    return usage_error("--rendezvous-timeout applies to a distributed launch (--nproc N, torchrun or srun)");
  }
  std::string error;
  const auto device = resolve_device(o.device, error);
  if (!device) return usage_error(error);
  if (o.nproc > 1 && !rank_env) {
    if (o.suites != std::vector<std::string>{distributed::kDistributedSuite}) {
      return usage_error(fmt::format("--nproc {} runs only --suite {}", o.nproc, distributed::kDistributedSuite));
    }
    if (auto problem = rank_count_problem(o, *device)) return usage_error(*problem);
    if (!o.dry_run) {
      return distributed::launch_local_ranks({.executable = self_executable_path(), .argv = argv, .nproc = o.nproc});
    }
  }
  RunPlan plan;
  plan.suites = selected_suites(o.suites);
  plan.settings = measure_settings_from(o);
  plan.context = suite_context_from(o, *device);
  plan.self_executable = self_executable_path();
  plan.verbose = o.verbose;
  if (o.dry_run) return dry_run(o, plan, *device, argv);
  if (rank_env) {  // ranks 1..N-1 serve rank 0 here until the run ends; rank 0 goes on
    try {
      if (auto code = distributed::join_distributed_run(*rank_env, plan.suites, plan.context,
                                                          std::chrono::seconds(o.rendezvous_timeout_s))) {
        return *code;
      }
    } catch (const InputError& e) {
      return usage_error(e.what());
    }
  }
  // Releases the other ranks on every way out of rank 0's run.
  struct EndDistributedRun {
    ~EndDistributedRun() { distributed::end_distributed_run(); }
  } release_ranks;

  // A result records its command line (and --out) as JSON text, which must be UTF-8: found now,
  // not when the first finished case is written.
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (!is_valid_utf8(argv[i])) {
      return usage_error(fmt::format("argument {} ('{}') is not valid UTF-8: a result records its command line as "
                                     "JSON text; rename the path",
                                     i, abbreviated(printable(argv[i]))));
    }
  }
  Result result;
  result.context = make_run_context(argv, *device, plan.settings);
  if (o.out.empty()) o.out = fmt::format("results/runs/{}-{}.json", compact_utc_timestamp(), result.context.hostname);
  // Found now, not after the whole benchmark.
  if (!output_file_writable("--out", o.out)) return exit_code::usage;
  if (!o.profile_dir.empty() && !output_dir_writable("--profile", o.profile_dir)) return exit_code::usage;
  std::string partial_path;
  if (!rank_env) {  // a distributed run is started again rather than resumed
    partial_path = o.resume.empty() ? partial_path_for(o.out) : o.resume;
    if (o.resume.empty()) {
      if (auto problem = output_file_problem(partial_path)) {
        return usage_error(fmt::format("{}: cannot keep finished cases there: {}", partial_path, *problem));
      }
    } else {
      if (auto problem = resume_context_problem(result.context, partial.result.context, o.resume)) return usage_error(*problem);
      const int kept = count_cases(partial.result);
      const std::string resumed_at = result.context.timestamp_utc;
      const auto warnings = std::move(result.context.warnings);
      result.context = partial.result.context;  // the run's own start, argv and settings
      for (const auto& w : warnings) {
        if (std::find(result.context.warnings.begin(), result.context.warnings.end(), w) == result.context.warnings.end()) {
          result.context.warnings.push_back(w);
        }
      }
      result.context.warnings.push_back(fmt::format("resumed at {} from {}: {} case(s) were measured before the "
                                                    "interruption",
                                                    resumed_at,
                                                    o.resume, kept));
      plan.finished_cases = finished_cases_of(partial.result);
    }
  }
  fmt::print(stderr, "tipbench {}: {} suite(s) on {} ({}), {} blocks{}\n", result.context.tipbench_version,
             plan.suites.size(), device->str(), result.context.fingerprint_slug, plan.settings.blocks,
             o.quick ? ", quick" : "");
  if (!plan.finished_cases.empty()) {
    fmt::print(stderr, "resuming {}: {} case(s) already measured\n", o.resume, plan.finished_cases.size());
  }
  for (const auto& w : result.context.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (const auto banner = reports::injected_slowdown_banner(result); !banner.empty()) {
    fmt::print(stderr, "{}\n", banner);
  }

  // Whether the partial file on disk holds finished cases: a message names it only then.
  bool partial_kept = !plan.finished_cases.empty();  // a resumed run's file
  if (!partial_path.empty()) {
    const int kept = static_cast<int>(plan.finished_cases.size());
    install_interrupt_notice(kept > 0 ? resume_hint(kept, partial_path)
                                      : "\ninterrupted: no case had finished; nothing kept");
    plan.case_finished = [&](const std::vector<SuiteResult>& so_far) {
      Result done = result;
      done.suites = so_far;
      try {
        write_partial_run({o.out, run_options_to_json(o), done}, partial_path);
        partial_kept = true;  // a later failed write leaves this file as it was
        set_interrupt_notice(resume_hint(count_cases(done), partial_path));
      } catch (const std::exception& e) {  // losing the safety net is no reason to stop measuring
        fmt::print(stderr, "warning: cannot keep finished cases in {}: {}\n", abbreviated(partial_path),
                   error_summary(e));
      }
    };
  }
  Progress progress(Progress::stderr_is_tty());
  try {
    result.suites = run_suites(plan, progress);
    distributed::end_distributed_run();  // the other ranks exit while rank 0 writes
  } catch (const InputError& e) {  // bad input found while staging or measuring: nothing written
    return usage_error(e.what());
  }
  try {
    write_result_atomically(result, o.out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", result_write_failure(error_summary(e), partial_kept ? partial_path : ""));
    return exit_code::internal;
  }
  if (!partial_path.empty()) {
    remove_interrupt_notice();
    // The partial file goes only once the result holds every case it kept.
    const auto written = finished_cases_of(result);
    const bool complete = std::all_of(plan.finished_cases.begin(), plan.finished_cases.end(),
                                      [&](const auto& kept) { return written.contains(kept.first); });
    if (complete) {
      std::remove(partial_path.c_str());
    } else {
      fmt::print(stderr, "warning: {} kept: the result lacks cases it holds\n", partial_path);
    }
  }
  reports::print_run_summary(result, stdout);
  fmt::print("\nwrote {}\n", o.out);
  return any_unusable(result.suites) ? exit_code::failed : exit_code::ok;
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
      sub.add_flag_callback(flag, [o, option] { o->suite_options[option.name] = "true"; }, help);
      continue;
    }
    if (!option.default_value.empty()) help += fmt::format(" (default {})", option.default_value);
    if (option.type == OptionType::choice) help += fmt::format(" {{{}}}", fmt::join(option.choices, ","));
    auto* added = sub.add_option_function<std::string>(
        flag, [o, option](const std::string& value) { o->suite_options[option.name] = value; }, help);
    added->check(not_a_flag());
    added->check(CLI::Validator(
        [option](std::string& value) { return option.problem(value); }, "", option.name));
  }
}

}  // namespace

Command add_run_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto* sub = app.add_subcommand("run", "Run suites and write a result JSON");
  auto o = std::make_shared<RunOptions>();
  o->suite_options = default_suite_options();
  sub->add_option("--suite", o->suites, "Suite to run (repeatable), or all")
      ->check(CLI::IsMember(with_all(suite_names())))
      ->capture_default_str();
  sub->add_option("--model", o->models,
                  "Reference model (repeatable); default: small_cnn on CPU, resnet50 on CUDA (resnet18 with --quick)")
      ->check(CLI::IsMember(model_names()));
  sub->add_option("--device", o->device, "auto (cuda:0 if present, else cpu), cpu, cuda or cuda:N")
      ->capture_default_str();
  sub->add_option("--batch-size", o->batch_size, "Samples per step; default: per model and device")
      ->check(not_a_flag() & whole_number(kBatchSizeRange.min, kBatchSizeRange.max));
  sub->add_flag("--quick", o->quick, "Tiny budget for CI and smoke runs (6 blocks of short trials)");
  sub->add_option("--blocks", o->blocks, "Blocks (one trial of every arm each); default 10, 8 with --quick")
      ->check(not_a_flag() & whole_number(kBlocksRange.min, kBlocksRange.max));
  sub->add_option("--threshold", o->threshold_pct, "Practical threshold for a verdict, in percent (default 2)")
      ->check(real_number(kThresholdPctRange.min, kThresholdPctRange.max));
  sub->add_option("--out", o->out,
                  "Result file; default results/runs/<UTC timestamp>-<host>.json. Finished cases are kept in "
                  "<out>.partial while the run goes on")
      ->check(not_a_flag());
  sub->add_option("--seed", o->seed, "Seed for weights, inputs and block order")
      ->check(seed_value())
      ->capture_default_str();
  sub->add_option("--inject-slowdown", o->inject_slowdown_pct,
                  "TEST KNOB: slow every timed step down by PCT percent on purpose, to calibrate the "
                  "regression gate (recorded in the result; never a real measurement)")
      ->check(real_number(kInjectSlowdownPctRange.min, kInjectSlowdownPctRange.max));
  sub->add_option("--nproc", o->nproc,
                  "data_parallel: launch N local ranks (one per GPU, or per CPU core) and reap them; ignored "
                  "under torchrun or srun, whose variables say the rank (docs/distributed.md)")
      ->check(not_a_flag() & whole_number(kNprocRange.min, kNprocRange.max))
      ->capture_default_str();
  sub->add_flag("--oversubscribe", o->oversubscribe,
                fmt::format("data_parallel on a CPU: allow more ranks than cores, up to {} per core",
                            kRanksPerCoreOversubscribed));
  sub->add_option("--profile", o->profile_dir,
                  "After each arm's last timed trial, profile a few more steps with Kineto and write a Chrome trace "
                  "per arm into DIR (open in Perfetto); the result and the HTML report name the top ops. Never timed")
      ->check(not_a_flag());
  add_suite_options(*sub, o);
  sub->add_option("--resume", o->resume,
                  "Finish an interrupted run from its partial file (<out>.partial), with its options; flags given "
                  "with it must agree with them")
      ->check(not_a_flag() & CLI::ExistingFile);
  sub->add_flag("--verbose", o->verbose, "Print a failed arm's whole error (C++ backtrace included), not only its first line");
  sub->add_flag("--dry-run", o->dry_run,
                "Check every flag, the device, the suites' options and every output, then exit (0, or 2 for bad "
                "input) without measuring or writing anything");
  sub->add_option("--rendezvous-timeout", o->rendezvous_timeout_s,
                  "A distributed launch (--nproc, torchrun, srun): how long a rank waits at the start for the "
                  "rendezvous store and for every rank to join, in seconds")
      ->check(not_a_flag() & whole_number(1, 86400))
      ->capture_default_str();
  return {sub, [o, argv, sub] {
            // Which measurement flags were typed: with --resume they must agree with the run's, and
            // a suite's own flag needs a selected suite that declares it.
            std::set<std::string> typed;
            for (const auto* option : sub->get_options()) {
              const auto name = option->get_name();
              if (option->count() > 0 && name != "--resume" && name != "--verbose" && name != "--dry-run" &&
                  name != "--help") {
                typed.insert(name);
              }
            }
            return run(*o, typed, argv);
          }};
}

}  // namespace tipbench::cli
