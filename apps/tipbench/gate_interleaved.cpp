// `tipbench gate --base-binary B --head-binary H`: both builds run here, interleaved block by
// block (head's block i pairs with base's block i); candidates are confirmed by a new session.
#include "gate_modes.h"

#include "gate_session.h"
#include "gate_verdict.h"
#include "tipbench/error_text.h"
#include "tipbench/exit_codes.h"

#include <fmt/format.h>

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
  const DryRun r = dry_run(binary, args, log);
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

}  // namespace

int gate_interleaved(const GateFlags& f, const gate::GateConfig& config) {
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
      report,
      f.no_rerun ? gate::Remeasure{} : paired_remeasure(session.base, session.head, plan.work_dir, effective, f.seed),
      effective);
  return deliver(f, report, base_path, head_path, plan.work_dir);
}

}  // namespace tipbench::cli
