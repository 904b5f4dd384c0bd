// `tipbench gate --base-binary B --head-binary H`: both builds run here, interleaved block by
// block (head's block i pairs with base's block i); candidates are confirmed by a new session.
// `--base-model-file A --head-model-file B`: the same, one binary running two versions of a model.
#include "gate_modes.h"

#include "tipbench/gate/interleaved_session.h"
#include "tipbench/models/model_file.h"
#include "tipbench/machine/run_context.h"
#include "gate_verdict.h"
#include "tipbench/gate/explain_checks.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

namespace tipbench::cli {

namespace {

// Before block 0, each binary checks the exact arguments it will get (`run --dry-run`): a flag
// or value it refuses is the user's input (exit 2), found before anything is measured. A binary
// from before --dry-run says so, and its first block checks them instead.
void check_child_arguments(const std::string& side, const std::string& binary, std::vector<std::string> args,
                           const std::string& work_dir) {
  const std::string log = fmt::format("{}/dry-run-{}.log", work_dir, side);
  args.insert(args.end(), {"--blocks", "1", "--out", fmt::format("{}/dry-run-{}.json", work_dir, side)});
  const ChildDryRun r = child_dry_run(binary, args, log);
  if (r.code == exit_code::ok) return;
  if (r.code == exit_code::usage && r.error.find("--dry-run") != std::string::npos) {
    fmt::print(stderr, "gate: note: the {} binary predates `run --dry-run`: its first block checks its arguments\n",
               side);
    return;
  }
  if (r.code == exit_code::usage) {
    throw UsageError(fmt::format("the {} binary refuses its run arguments: {} (log: {})", side,
                                 r.error.empty() ? "no error line" : r.error, log));
  }
  throw ChildRunError(fmt::format("`{} run --dry-run` exited with {}; its log: {}{}", binary, r.code, log,
                                  r.error.empty() ? "" : ": " + r.error));
}

// --base-model-file/--head-model-file: both files usable, and of one model name (their cases pair
// by name). Returns the `--model-file` arguments of each side, empty without the flags.
std::pair<std::vector<std::string>, std::vector<std::string>> model_file_args(const GateFlags& f) {
  if (f.base_model_file.empty()) return {};
  if (!f.models.empty()) throw UsageError("--model picks a reference model; the model files are the models here");
  models::ModelFile base, head;
  try {
    base = models::inspect_model_file({.path = f.base_model_file});
    head = models::inspect_model_file({.path = f.head_model_file});
  } catch (const models::ModelFileError& e) {
    throw UsageError(e.what());
  }
  if (base.name != head.name) {
    throw UsageError(
        fmt::format("the model files name two models ('{}', '{}'): their cases pair by name, so export "
                    "both versions with the same --name",
                    base.name, head.name));
  }
  if (base.sha256 == head.sha256) {
    fmt::print(stderr, "gate: note: the two model files are the same bytes (sha256 {}): an A/A check\n",
               base.sha256.substr(0, 12));
  }
  const auto absolute = [](const std::string& p) { return std::filesystem::absolute(p).string(); };
  return {{"--model-file", absolute(f.base_model_file)}, {"--model-file", absolute(f.head_model_file)}};
}

// `--counts`: the count checks alone (no time metric gated, nothing re-measured).
int deliver_counts(const GateFlags& f, gate::GateConfig config, const Result& base, const Result& head,
                   const std::string& base_path, const std::string& head_path, const std::string& work_dir) {
  config.metrics.clear();
  config.cpu_metrics.clear();
  config.suites.clear();
  auto report = gate::evaluate_gate(base, head, config, {.paired = true, .seed = f.seed});
  if (report.count_checks.empty()) {
    report.problems.push_back(
        "no arm's counted work is in both runs: a binary from before counted work (schema 1.14), a run with "
        "--count-steps 0, or a config whose \"counts\" is empty");
    gate::finish(report);
  }
  return deliver(f, report, base_path, head_path, work_dir);
}

}  // namespace

int gate_interleaved(const GateFlags& f, const gate::GateConfig& config) {
  check_mode_flags(f, /*interleaved=*/true);
  for (const auto* bin : {&f.base_binary, &f.head_binary}) {
    if (!bin->empty() && !is_executable(*bin)) {
      throw UsageError(fmt::format("'{}' is not an executable file", abbreviated(*bin)));
    }
  }
  const auto [base_model, head_model] = model_file_args(f);
  gate::SessionPlan plan;
  plan.base_binary = f.base_binary.empty() ? self_executable_path() : f.base_binary;
  plan.head_binary = f.head_binary.empty() ? self_executable_path() : f.head_binary;
  std::vector<std::string> common;
  if (!f.full) common.push_back("--quick");
  for (const auto& s : f.suites) common.insert(common.end(), {"--suite", s});
  for (const auto& m : f.models) common.insert(common.end(), {"--model", m});
  if (!f.device.empty()) common.insert(common.end(), {"--device", f.device});
  common.insert(common.end(), f.run_args.begin(), f.run_args.end());
  plan.base_args = common;
  plan.head_args = common;
  plan.base_args.insert(plan.base_args.end(), base_model.begin(), base_model.end());
  plan.head_args.insert(plan.head_args.end(), head_model.begin(), head_model.end());
  if (f.head_inject_slowdown_pct > 0) {
    plan.head_args.insert(plan.head_args.end(), {"--inject-slowdown", fmt::format("{:g}", f.head_inject_slowdown_pct)});
    if (!f.head_inject_slowdown_op.empty()) {
      plan.head_args.insert(plan.head_args.end(), {"--inject-slowdown-op", f.head_inject_slowdown_op});
      // The same RecordFunction callback on the base, without the delay (slowdown.h).
      plan.base_args.insert(plan.base_args.end(),
                            {"--inject-slowdown", "0", "--inject-slowdown-op", f.head_inject_slowdown_op});
    }
  }
  if (f.head_inject_extra_ops > 0) {
    plan.head_args.insert(plan.head_args.end(), {"--inject-extra-ops", std::to_string(f.head_inject_extra_ops)});
  }
  if (f.explain) {
    plan.base_args.push_back("--explain");
    plan.head_args.push_back("--explain");
  }
  plan.blocks = f.blocks;
  if (f.counts) {
    // Each arm counts in its run's block-0 trial, after its timed steps: one block a side, and
    // trials no longer than they must be (unless --run-arg sets them).
    plan.blocks = 1;
    const bool timed_by_user = std::any_of(f.run_args.begin(), f.run_args.end(),
                                           [](const std::string& a) { return a.starts_with("--trial-time"); });
    if (!timed_by_user) {
      for (auto* args : {&plan.base_args, &plan.head_args}) args->insert(args->end(), {"--trial-time", "0.01"});
    }
  }
  plan.seed = f.seed;
  plan.work_dir = f.out_dir.empty() ? default_out_dir() : f.out_dir;
  check_outputs(f, plan.work_dir);
  check_child_arguments("base", plan.base_binary, plan.base_args, plan.work_dir);
  check_child_arguments("head", plan.head_binary, plan.head_args, plan.work_dir);
  fmt::print(stderr, "gate: head {} vs base {}, {}, work dir {}\n",
             f.head_model_file.empty() ? plan.head_binary : f.head_model_file,
             f.base_model_file.empty() ? plan.base_binary : f.base_model_file,
             f.counts ? std::string("counted work only (one block a side)")
                      : fmt::format("{} interleaved blocks", plan.blocks),
             plan.work_dir);
  const gate::SessionResult session = gate::run_interleaved(plan, "session");
  const std::string base_path = plan.work_dir + "/base.json";
  const std::string head_path = plan.work_dir + "/head.json";
  write_result_atomically(session.base, base_path);
  write_result_atomically(session.head, head_path);
  gate::GateConfig effective = config.for_device(session.head.context.device);  // cpu_metrics on a CPU
  if (f.counts) return deliver_counts(f, effective, session.base, session.head, base_path, head_path, plan.work_dir);
  auto report = gate::evaluate_gate(session.base, session.head, effective, {.paired = true, .seed = f.seed});
  gate::confirm_candidates(report,
                           f.no_rerun
                               ? gate::Remeasure{}
                               : gate::paired_remeasure(session.base, session.head, plan.work_dir, effective, f.seed),
                           effective);
  gate::explain_checks(report, session.base, session.head, /*paired=*/true, f.explain);
  return deliver(f, report, base_path, head_path, plan.work_dir);
}

}  // namespace tipbench::cli
