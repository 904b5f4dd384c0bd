// `tipbench gate`: PASS / FAIL / INCONCLUSIVE for a current run against a baseline, in one of
// three modes: a stored baseline (--baseline FILE|auto --current FILE, unpaired), two result
// files from one interleaved session (--paired), or head vs base binaries run here, interleaved
// block by block (--base-binary/--head-binary). Candidates are re-measured once before failing.
#include "tipbench/commands.h"

#include "gate_session.h"
#include "cli_checks.h"
#include "tipbench/atomic_file.h"
#include "tipbench/child_signals.h"
#include "tipbench/error_text.h"
#include "tipbench/exit_codes.h"
#include "tipbench/gate/baseline_store.h"
#include "tipbench/gate/decision.h"
#include "tipbench/json_number.h"
#include "tipbench/registry.h"
#include "tipbench/reports/gate_report.h"
#include "tipbench/run_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace tipbench::cli {

namespace {

struct GateFlags {
  std::string baseline;
  std::string current;
  std::string base_binary;
  std::string head_binary;
  bool paired = false;
  bool across_software = false;
  std::string config_path;
  double threshold_pct = 0;
  double alpha = 0;
  std::string baselines_dir = "results/baselines";
  bool no_rerun = false;
  std::string rerun_binary;
  int blocks = 8;
  std::vector<std::string> suites;
  std::vector<std::string> models;
  std::string device;
  bool full = false;
  std::vector<std::string> run_args;
  double head_inject_slowdown_pct = 0;
  std::string out_dir;
  std::string markdown_path;
  std::string json_path;
  std::uint64_t seed = 0;
  std::set<std::string> given;  // the flags typed, as typed ("--suite")
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each mode's own flags: given in the other mode they would be ignored without a word.
const std::set<std::string> kInterleavedOnly{"--suite", "--model", "--device", "--full", "--run-arg",
                                             "--head-inject-slowdown", "--blocks"};
const std::set<std::string> kStoredOnly{"--baseline", "--current", "--paired", "--across-software", "--baselines-dir",
                                        "--rerun-binary"};

void check_mode_flags(const GateFlags& f, bool interleaved) {
  for (const auto& flag : interleaved ? kStoredOnly : kInterleavedOnly) {
    if (!f.given.contains(flag)) continue;
    if (flag == "--across-software") {
      throw UsageError("--across-software applies to a stored baseline; --base-binary/--head-binary run both sides "
                       "here, and a software difference between them is already the change under test");
    }
    throw UsageError(interleaved ? fmt::format("{} applies to a stored baseline (--baseline, --current), not to "
                                               "--base-binary/--head-binary",
                                               flag)
                                 : fmt::format("{} applies to an interleaved session (--base-binary, --head-binary), "
                                               "not to --baseline/--current",
                                               flag));
  }
}


gate::GateConfig load_config(const GateFlags& f) {
  gate::GateConfig config = f.config_path.empty() ? gate::GateConfig{} : gate::read_gate_config(f.config_path);
  const auto known = suite_names();
  for (const auto& s : config.suite_names()) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      throw InputError(fmt::format("{}: unknown suite '{}' in suites; valid: {}", f.config_path, s, fmt::join(known, ", ")));
    }
  }
  if (f.threshold_pct > 0) {  // one threshold for everything gated
    for (auto& [metric, t] : config.metrics) t = f.threshold_pct / 100;
    for (auto& [metric, t] : config.cpu_metrics) t = f.threshold_pct / 100;
    for (auto& [suite, metrics] : config.suites) {
      for (auto& [metric, t] : metrics) {
        if (t > 0) t = f.threshold_pct / 100;
      }
    }
  }
  if (f.alpha > 0) config.alpha = f.alpha;
  return config;
}

// The `run` arguments a result was made with (after "<binary> run"), for re-measuring it.
std::vector<std::string> run_args_of(const Result& r) {
  const auto& argv = r.context.argv;
  return argv.size() > 2 ? std::vector<std::string>(argv.begin() + 2, argv.end()) : std::vector<std::string>{};
}

std::string binary_of(const Result& r, const std::string& preferred) {
  if (!preferred.empty()) return preferred;
  if (!r.context.argv.empty() && is_executable(r.context.argv.front())) return r.context.argv.front();
  return self_executable_path();
}

// Flagged keys grouped by case, so each case is re-measured once for all its flagged cells.
std::map<std::pair<std::string, std::string>, std::vector<gate::CellKey>> by_case(const std::vector<gate::CellKey>& keys) {
  std::map<std::pair<std::string, std::string>, std::vector<gate::CellKey>> groups;
  for (const auto& k : keys) groups[{k.suite, k.case_name}].push_back(k);
  return groups;
}

const gate::Cell* find_cell(const std::vector<gate::Cell>& cells, const gate::CellKey& key) {
  for (const auto& c : cells) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

// Compares the re-measured cells and keeps those that could be compared.
void collect(const std::vector<gate::CellKey>& keys, const Result& reference, const Result& candidate,
             const gate::GateConfig& config, bool paired, std::map<gate::CellKey, gate::CellComparison>& out) {
  const auto ref_cells = gate::extract_cells(reference);
  const auto cand_cells = gate::extract_cells(candidate);
  for (const auto& key : keys) {
    const auto* r = find_cell(ref_cells, key);
    const auto* c = find_cell(cand_cells, key);
    if (!r || !c) continue;
    gate::CompareOptions options{.paired = paired, .resamples = gate::resamples_for(1, config.alpha), .seed = 1};
    options.practical_threshold = config.threshold_for(key.suite, key.metric).value_or(0.03);
    if (auto cmp = gate::compare_cell(*r, *c, options)) out.emplace(key, *cmp);
  }
}

// Paired modes: re-run both sides interleaved, each with the arguments its result was made with.
gate::Remeasure paired_remeasure(const Result& base, const Result& head, const std::string& work_dir,
                                 const gate::GateConfig& config, std::uint64_t seed) {
  return [&base, &head, work_dir, &config, seed](const std::vector<gate::CellKey>& keys) {
    std::map<gate::CellKey, gate::CellComparison> out;
    int n = 0;
    for (const auto& [id, group] : by_case(keys)) {
      SessionPlan plan;
      plan.base_binary = binary_of(base, "");
      plan.head_binary = binary_of(head, "");
      const auto selection = select_case(head, group.front());
      plan.base_args = strip_selection(run_args_of(base));
      plan.head_args = strip_selection(run_args_of(head));
      plan.base_args.insert(plan.base_args.end(), selection.begin(), selection.end());
      plan.head_args.insert(plan.head_args.end(), selection.begin(), selection.end());
      plan.blocks = std::max(3, base.context.settings.blocks);
      plan.seed = seed + 7919;  // fresh blocks, not a replay of the first session
      plan.work_dir = work_dir;
      fmt::print(stderr, "gate: re-measuring {} (head vs base, {} blocks) to confirm\n", id.second, plan.blocks);
      const auto again = run_interleaved(plan, fmt::format("confirm{}", n++));
      collect(group, again.base, again.head, config, /*paired=*/true, out);
    }
    return out;
  };
}

// Stored baseline: re-run the current side only and compare it with the baseline again.
gate::Remeasure stored_remeasure(const Result& baseline, const Result& current, const std::string& binary,
                                 const std::string& work_dir, const gate::GateConfig& config) {
  return [&baseline, &current, binary, work_dir, &config](const std::vector<gate::CellKey>& keys) {
    std::map<gate::CellKey, gate::CellComparison> out;
    int n = 0;
    for (const auto& [id, group] : by_case(keys)) {
      auto args = strip_selection(run_args_of(current));
      const auto selection = select_case(current, group.front());
      args.insert(args.end(), selection.begin(), selection.end());
      args.insert(args.end(), {"--blocks", std::to_string(std::max(3, current.context.settings.blocks)), "--seed", "7919"});
      const std::string stem = fmt::format("{}/confirm{}", work_dir, n++);
      fmt::print(stderr, "gate: re-measuring {} with {} to confirm\n", id.second, binary);
      const Result again = run_once(binary, args, stem + ".json", stem + ".log");
      collect(group, baseline, again, config, /*paired=*/false, out);
    }
    return out;
  };
}

// The Markdown and JSON verdicts (where asked for). Returns why one could not be written, if so.
std::optional<std::string> write_outputs(const GateFlags& f, const gate::GateReport& report,
                                         const std::string& base_label, const std::string& current_label,
                                         const std::string& out_dir) {
  std::string md_path = f.markdown_path;
  std::string json_path = f.json_path;
  if (!out_dir.empty()) {
    if (md_path.empty()) md_path = out_dir + "/gate.md";
    if (json_path.empty()) json_path = out_dir + "/gate.json";
  }
  try {
    if (!md_path.empty()) {
      write_file_atomically(md_path, reports::gate_markdown(report, base_label, current_label));
      fmt::print("wrote {}\n", md_path);
    }
    if (!json_path.empty()) {
      write_file_atomically(json_path, checked_dump(gate::gate_report_to_json(report), 2, json_path) + "\n");
      fmt::print("wrote {}\n", json_path);
    }
  } catch (const std::exception& e) {
    return error_summary(e);
  }
  return std::nullopt;
}

// The verdict on the console, then the files; the last line names the code really returned.
int deliver(const GateFlags& f, const gate::GateReport& report, const std::string& base_label,
            const std::string& current_label, const std::string& out_dir) {
  const auto problem = write_outputs(f, report, base_label, current_label, out_dir);
  const int code = problem ? exit_code::internal : report.exit_code();
  reports::print_gate_report(report, base_label, current_label, stdout, code);
  if (problem) fmt::print(stderr, "error: cannot write the gate's verdict: {}\n", *problem);
  return code;
}

// Fail fast: every output the gate will write, checked before anything is measured.
void check_outputs(const GateFlags& f, const std::string& out_dir) {
  for (const auto& [flag, path] : {std::pair{"--markdown", f.markdown_path}, std::pair{"--json", f.json_path}}) {
    if (const auto problem = path.empty() ? std::nullopt : output_file_problem(path)) {
      throw UsageError(fmt::format("{} {}: cannot write there: {}", flag, abbreviated(path), *problem));
    }
  }
  if (const auto problem = out_dir.empty() ? std::nullopt : output_dir_problem(out_dir)) {
    throw UsageError(fmt::format("--out-dir {}: cannot write there: {}", abbreviated(out_dir), *problem));
  }
}

std::string default_out_dir() { return "results/gate/" + compact_utc_timestamp(); }

// Before block 0, each binary checks the exact arguments it will get (`run --dry-run`): a flag
// or value it refuses is the user's input (exit 2), found before anything is measured. A binary
// from before --dry-run says so, and its first block checks them instead.
void check_child_arguments(const std::string& side, const std::string& binary, std::vector<std::string> args,
                           const std::string& work_dir) {
  const std::string log = fmt::format("{}/dry-run-{}.log", work_dir, side);
  args.insert(args.end(), {"--blocks", "1", "--out", fmt::format("{}/dry-run-{}.json", work_dir, side)});
  const DryRun r = dry_run(binary, args, log);
  if (r.code == exit_code::ok) return;
  if (r.code == exit_code::usage && r.error.find("--dry-run") != std::string::npos) {
    fmt::print(stderr, "gate: note: the {} binary predates `run --dry-run`: its first block checks its arguments\n", side);
    return;
  }
  if (r.code == exit_code::usage) {
    throw UsageError(fmt::format("the {} binary refuses its run arguments: {} (log: {})", side,
                                 r.error.empty() ? "no error line" : r.error, log));
  }
  throw ChildRunError(fmt::format("`{} run --dry-run` exited with {}; its log: {}{}", binary, r.code, log,
                                  r.error.empty() ? "" : ": " + r.error));
}

int interleaved(const GateFlags& f, const gate::GateConfig& config) {
  check_mode_flags(f, /*interleaved=*/true);
  for (const auto* bin : {&f.base_binary, &f.head_binary}) {
    if (!is_executable(*bin)) throw UsageError(fmt::format("'{}' is not an executable file", abbreviated(*bin)));
  }
  SessionPlan plan;
  plan.base_binary = f.base_binary;
  plan.head_binary = f.head_binary;
  std::vector<std::string> common;
  if (!f.full) common.push_back("--quick");
  for (const auto& s : f.suites) common.insert(common.end(), {"--suite", s});
  for (const auto& m : f.models) common.insert(common.end(), {"--model", m});
  if (!f.device.empty()) common.insert(common.end(), {"--device", f.device});
  common.insert(common.end(), f.run_args.begin(), f.run_args.end());
  plan.base_args = common;
  plan.head_args = common;
  if (f.head_inject_slowdown_pct > 0) {
    plan.head_args.insert(plan.head_args.end(), {"--inject-slowdown", fmt::format("{:g}", f.head_inject_slowdown_pct)});
  }
  plan.blocks = f.blocks;
  plan.seed = f.seed;
  plan.work_dir = f.out_dir.empty() ? default_out_dir() : f.out_dir;
  check_outputs(f, plan.work_dir);
  check_child_arguments("base", plan.base_binary, plan.base_args, plan.work_dir);
  check_child_arguments("head", plan.head_binary, plan.head_args, plan.work_dir);
  fmt::print(stderr, "gate: head {} vs base {}, {} interleaved blocks, work dir {}\n", f.head_binary, f.base_binary,
             f.blocks, plan.work_dir);
  const SessionResult session = run_interleaved(plan, "session");
  const std::string base_path = plan.work_dir + "/base.json";
  const std::string head_path = plan.work_dir + "/head.json";
  write_result_atomically(session.base, base_path);
  write_result_atomically(session.head, head_path);
  const gate::GateConfig effective = config.for_device(session.head.context.device);  // cpu_metrics on a CPU
  auto report = gate::evaluate_gate(session.base, session.head, effective, {.paired = true, .seed = f.seed});
  gate::confirm_candidates(
      report, f.no_rerun ? gate::Remeasure{} : paired_remeasure(session.base, session.head, plan.work_dir, effective, f.seed),
      effective);
  return deliver(f, report, base_path, head_path, plan.work_dir);
}

// A stored baseline gates runs of its own fingerprint; with --across-software, of its hardware
// (other software is then the change under test). Throws InputError otherwise.
void check_fingerprints(const GateFlags& f, const Result& baseline, const Result& current,
                        const std::string& baseline_path) {
  const auto& a = baseline.context.fingerprint;
  const auto& b = current.context.fingerprint;
  // Every mode first: each file is the machine it says it is (its slug is its fingerprint's).
  for (const auto& [run, path] : {std::pair<const Result*, std::string>{&baseline, baseline_path},
                                  std::pair<const Result*, std::string>{&current, f.current}}) {
    if (auto why = slug_identity_problem(run->context.fingerprint_slug, run->context.fingerprint)) {
      throw InputError(fmt::format("{}: {}: the file was edited or is not a tipbench result of that machine", path, *why));
    }
  }
  const bool same_hardware = tipbench::same_hardware(a, b);
  if (f.paired) {
    // One interleaved session runs on one machine; its two sides may differ in software (a stack A/B).
    if (same_hardware) return;
    throw InputError(fmt::format("--paired: {} and {} come from other hardware ({} vs {}: {}): paired blocks come "
                                 "from one session on one machine",
                                 baseline_path, f.current, baseline.context.fingerprint_slug,
                                 current.context.fingerprint_slug, fingerprint_changes_text(a, b)));
  }
  if (baseline.context.fingerprint_slug == current.context.fingerprint_slug) return;
  if (f.across_software && same_hardware) return;
  const std::string changes = fingerprint_changes_text(a, b);
  if (f.across_software) {
    throw InputError(fmt::format(
        "{} is a baseline from other hardware ({} vs the current {}: {}): --across-software lets other software "
        "gate, never other hardware. Use `tipbench compare` to compare across machines",
        baseline_path, baseline.context.fingerprint_slug, current.context.fingerprint_slug, changes));
  }
  throw InputError(fmt::format(
      "{} is a baseline from other {} ({} vs the current {}: {}): a stored baseline only gates runs of its own "
      "fingerprint. {}",
      baseline_path, same_hardware ? "software" : "hardware or software", baseline.context.fingerprint_slug,
      current.context.fingerprint_slug, changes,
      same_hardware ? "Add --across-software to gate this software change against it"
                    : "Use `--baseline auto`, or `tipbench compare` to compare across machines"));
}

int from_files(const GateFlags& f, const gate::GateConfig& config) {
  if (f.current.empty() || f.baseline.empty()) {
    throw UsageError("give --baseline FILE|auto and --current FILE, or --base-binary and --head-binary");
  }
  check_mode_flags(f, /*interleaved=*/false);
  if (!f.rerun_binary.empty() && !is_executable(f.rerun_binary)) {
    throw UsageError(fmt::format("--rerun-binary '{}' is not an executable file", abbreviated(f.rerun_binary)));
  }
  check_outputs(f, f.out_dir);
  const Result current = read_result(f.current);
  // Before `auto` looks the baseline up by this slug (check_fingerprints says it again for both).
  if (auto why = slug_identity_problem(current.context.fingerprint_slug, current.context.fingerprint)) {
    throw InputError(fmt::format("{}: {}: the file was edited or is not a tipbench result of that machine", f.current, *why));
  }
  std::string baseline_path = f.baseline;
  if (f.baseline == "auto") {
    if (f.paired) throw UsageError("--paired needs the base result of the same session, not --baseline auto");
    const auto found = f.across_software
                           ? gate::find_baseline_for_hardware(f.baselines_dir, current.context.fingerprint)
                           : gate::find_baseline(f.baselines_dir, current.context.fingerprint_slug);
    if (!found) {
      std::vector<std::string> slugs;
      for (const auto& b : gate::list_baselines(f.baselines_dir)) slugs.push_back(b.slug);
      fmt::print(stderr, "gate: INCONCLUSIVE: no stored baseline for {} {} in {} (stored: {}).\n"
                 "Store one with `tipbench baseline save RUN.json` or gate head vs base with "
                 "--base-binary/--head-binary.\n",
                 f.across_software ? "the hardware of" : "fingerprint", current.context.fingerprint_slug,
                 f.baselines_dir, slugs.empty() ? "none" : fmt::format("{}", fmt::join(slugs, ", ")));
      return exit_code::inconclusive;
    }
    baseline_path = found->path;
    fmt::print(stderr, "gate: baseline for {}: {}\n", current.context.fingerprint_slug, baseline_path);
  }
  const Result baseline = read_result(baseline_path);
  check_fingerprints(f, baseline, current, baseline_path);
  const std::string work_dir = f.out_dir.empty() ? default_out_dir() : f.out_dir;
  const gate::GateConfig effective = config.for_device(current.context.device);  // cpu_metrics on a CPU
  auto report = gate::evaluate_gate(baseline, current, effective, {.paired = f.paired, .seed = f.seed});
  gate::Remeasure remeasure;
  if (!f.no_rerun) {
    remeasure = f.paired ? paired_remeasure(baseline, current, work_dir, effective, f.seed)
                         : stored_remeasure(baseline, current, binary_of(current, f.rerun_binary), work_dir, effective);
  }
  gate::confirm_candidates(report, remeasure, effective);
  return deliver(f, report, baseline_path, f.current, f.out_dir);
}

int run_gate(const GateFlags& f) {
  // A CI runner cancelling the job signals the gate alone: the running child gets the signal too.
  ForwardTerminationSignals forwarding;
  try {
    const auto config = load_config(f);
    if (!f.base_binary.empty() || !f.head_binary.empty()) {
      if (f.base_binary.empty() || f.head_binary.empty()) throw UsageError("--base-binary and --head-binary go together");
      return interleaved(f, config);
    }
    return from_files(f, config);
  } catch (const ChildInterrupted& e) {
    fmt::print(stderr, "gate: interrupted by {}: {}; nothing was gated\n", e.signal == SIGINT ? "SIGINT" : "SIGTERM",
               e.log.empty() ? std::string("no run was started after it")
                             : fmt::format("the running `tipbench run` got it too and ended (its log: {})", e.log));
    std::fflush(stderr);
    die_of_signal(e.signal);
  } catch (const ChildRunError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    fmt::print("Result is: ERROR (exit {})\n", exit_code::internal);
    return exit_code::internal;
  } catch (const UsageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: the gate could not finish: {}\n", error_summary(e));
    return exit_code::internal;
  }
}

}  // namespace

Command add_gate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "gate", "Regression gate: PASS (0) / FAIL (1, confirmed regression) / INCONCLUSIVE (3); 2 on bad input");
  auto f = std::make_shared<GateFlags>();
  sub->add_option("--baseline", f->baseline, "Baseline result file, or auto: the stored baseline for the current run's fingerprint")->check(not_a_flag());
  sub->add_option("--current", f->current, "Current result file")->check(not_a_flag());
  sub->add_flag("--paired", f->paired, "--baseline and --current come from one interleaved session: pair them by block");
  sub->add_flag("--across-software", f->across_software,
                "A stored baseline of the same hardware but other software (LibTorch, CUDA, driver, ...) may gate the "
                "current run; with --baseline auto: the newest baseline of this hardware");
  sub->add_option("--base-binary", f->base_binary, "Interleaved mode: the base build's tipbench binary")->check(not_a_flag());
  sub->add_option("--head-binary", f->head_binary, "Interleaved mode: the head build's tipbench binary")->check(not_a_flag());
  sub->add_option("--config", f->config_path, "Gate thresholds (JSON, e.g. ci/gate-thresholds.json); default: throughput 3%")->check(not_a_flag());
  sub->add_option("--threshold", f->threshold_pct, "Override every practical threshold, in percent")->check(real_number(0.01, 100.0));
  sub->add_option("--alpha", f->alpha, "Family-wise false-alarm rate over all checks (Holm); default 0.05 or the config's")
      ->check(real_number(0.0001, 0.5));
  sub->add_option("--baselines-dir", f->baselines_dir, "Where stored baselines live")->capture_default_str()->check(not_a_flag());
  sub->add_flag("--no-rerun", f->no_rerun, "Do not re-measure candidates: they fail unconfirmed");
  sub->add_option("--rerun-binary", f->rerun_binary, "Stored mode: the binary that re-measures a candidate (default: the current run's)")->check(not_a_flag());
  sub->add_option("--blocks", f->blocks, "Interleaved mode: blocks per side")->check(CLI::Range(3, 1000))->capture_default_str();
  sub->add_option("--suite", f->suites, "Interleaved mode: suite to run (repeatable; default all)")->check(CLI::IsMember(suite_names()));
  sub->add_option("--model", f->models, "Interleaved mode: model (repeatable; default: run's default)");
  sub->add_option("--device", f->device, "Interleaved mode: device for both sides (default: run's auto)");
  sub->add_flag("--full", f->full, "Interleaved mode: full trials instead of --quick ones");
  sub->add_option("--run-arg", f->run_args, "Interleaved mode: one more argument for every `run` (repeatable; --run-arg=--flag=value)");
  sub->add_option("--head-inject-slowdown", f->head_inject_slowdown_pct,
                  "Calibration: slow the head's steps by PCT percent (the run's --inject-slowdown)")
      ->check(real_number(0.0, 1000.0));
  sub->add_option("--out-dir", f->out_dir, "Where session results, logs and gate.md/gate.json go (default results/gate/<UTC time>)")->check(not_a_flag());
  sub->add_option("--markdown", f->markdown_path, "Write the verdict as Markdown (for a PR comment)")->check(not_a_flag());
  sub->add_option("--json", f->json_path, "Write the verdict as JSON")->check(not_a_flag());
  sub->add_option("--seed", f->seed, "Seed for block order and bootstrap")->check(seed_value())->capture_default_str();
  return {sub, [f, sub] {
            for (const auto* option : sub->get_options()) {
              if (option->count() > 0) f->given.insert(option->get_name());
            }
            return run_gate(*f);
          }};
}

}  // namespace tipbench::cli
