// `tipbench gate`: PASS / FAIL / INCONCLUSIVE for a current run against a baseline, in one of
// three modes: a stored baseline (--baseline FILE|auto --current FILE, unpaired), two result
// files from one interleaved session (--paired), or head vs base binaries run here, interleaved
// block by block (--base-binary/--head-binary), or two versions of a user's model run by one binary
// (--base-model-file/--head-model-file). Candidates are re-measured once before failing.
// Here: the flags, the choice of mode (gate_modes.h) and the exit code of every way out.
#include "cli/commands.h"

#include "cli/shared/cli_checks.h"
#include "gate_modes.h"
#include "cli/shared/child_runs.h"
#include "tipbench/processes/child_signals.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/recorded_options.h"
#include "tipbench/suite/registry.h"

#include <fmt/format.h>

#include <csignal>
#include <memory>

namespace tipbench::cli {

namespace {

// The gate's ways out are every child-running command's (with_child_runs: 2 for bad input, 4 for a
// failed child, the signal for an interrupt), plus the verdict line CI logs grep for.
int run_gate(const GateFlags& f) {
  return with_child_runs(
      "gate",
      [&f] {
        const auto config = load_config(f);
        if (!f.base_model_file.empty() || !f.head_model_file.empty()) {
          if (f.base_model_file.empty() || f.head_model_file.empty())
            throw UsageError("--base-model-file and --head-model-file go together");
        }
        if (!f.base_binary.empty() || !f.head_binary.empty()) {
          if (f.base_binary.empty() || f.head_binary.empty())
            throw UsageError("--base-binary and --head-binary go together");
          return gate_interleaved(f, config);
        }
        if (!f.base_model_file.empty()) return gate_interleaved(f, config);
        return gate_from_files(f, config);
      },
      [] { fmt::print("Result is: ERROR (exit {})\n", exit_code::internal); });
}

}  // namespace

Command add_gate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "gate", "Regression gate: PASS (0) / FAIL (1, confirmed regression) / INCONCLUSIVE (3); 2 on bad input");
  auto f = std::make_shared<GateFlags>();
  sub->add_option("--baseline", f->baseline,
                  "Baseline result file, or auto: the stored baseline for the current run's fingerprint")
      ->check(not_a_flag());
  sub->add_option("--current", f->current, "Current result file")->check(not_a_flag());
  sub->add_flag("--paired", f->paired,
                "--baseline and --current come from one interleaved session: pair them by block");
  sub->add_flag("--across-software", f->across_software,
                "A stored baseline of the same hardware but other software (LibTorch, CUDA, driver, ...) may gate the "
                "current run; with --baseline auto: the newest baseline of this hardware");
  sub->add_option("--base-binary", f->base_binary, "Interleaved mode: the base build's tipbench binary")
      ->check(not_a_flag());
  sub->add_option("--head-binary", f->head_binary, "Interleaved mode: the head build's tipbench binary")
      ->check(not_a_flag());
  sub->add_option("--base-model-file", f->base_model_file,
                  "Interleaved mode: the base version of your model (a file export_model.py wrote); with "
                  "--head-model-file, one binary (this one, or --base-binary/--head-binary) runs both, interleaved; "
                  "a TorchScript file is code: gate only files you trust (docs/security.md)")
      ->check(not_a_flag() & CLI::ExistingFile);
  sub->add_option("--head-model-file", f->head_model_file, "Interleaved mode: the head version of your model")
      ->check(not_a_flag() & CLI::ExistingFile);
  sub->add_option("--config", f->config_path,
                  "Gate thresholds (JSON, e.g. ci/gate-thresholds.json); default: throughput 3%")
      ->check(not_a_flag());
  sub->add_option("--threshold", f->threshold_pct, "Override every practical threshold, in percent")
      ->check(real_number(0.01, 100.0));
  sub->add_option("--alpha", f->alpha,
                  "Family-wise false-alarm rate over all checks (Holm); default 0.05 or the config's")
      ->check(real_number(0.0001, 0.5));
  sub->add_option("--baselines-dir", f->baselines_dir, "Where stored baselines live")
      ->capture_default_str()
      ->check(not_a_flag());
  sub->add_flag("--no-rerun", f->no_rerun, "Do not re-measure candidates: they fail unconfirmed");
  sub->add_option("--rerun-binary", f->rerun_binary,
                  "Stored mode: the binary that re-measures a candidate (default: the current run's)")
      ->check(not_a_flag());
  sub->add_option("--blocks", f->blocks, "Interleaved mode: blocks per side")
      ->check(CLI::Range(3, 1000))
      ->capture_default_str();
  sub->add_option("--suite", f->suites, "Interleaved mode: suite to run (repeatable; default all)")
      ->check(CLI::IsMember(suite_names()));
  sub->add_option("--model", f->models, "Interleaved mode: model (repeatable; default: run's default)");
  sub->add_option("--device", f->device, "Interleaved mode: device for both sides (default: run's auto)");
  sub->add_flag("--full", f->full, "Interleaved mode: full trials instead of --quick ones");
  sub->add_option("--run-arg", f->run_args,
                  "Interleaved mode: one more argument for every `run` (repeatable; --run-arg=--flag=value)");
  sub->add_option("--head-inject-slowdown", f->head_inject_slowdown_pct,
                  "Calibration: slow the head's steps by PCT percent (the run's --inject-slowdown)")
      ->check(real_number(0.0, 1000.0));
  sub->add_option("--head-inject-slowdown-op", f->head_inject_slowdown_op,
                  "Calibration of --explain: spend --head-inject-slowdown inside this ATen op (the run's "
                  "--inject-slowdown-op)")
      ->check([](const std::string& v) { return is_op_name(v) ? std::string() : "not an op name like aten::addmm"; })
      ->needs("--head-inject-slowdown");
  sub->add_option("--head-inject-extra-ops", f->head_inject_extra_ops,
                  "Calibration of the count gate: the head makes N more small ATen op calls per step (the run's "
                  "--inject-extra-ops)")
      ->check(CLI::Range(1, 100000));
  sub->add_flag("--explain", f->explain,
                "Explain every check by the ops and kernels that made the difference, not only a FAIL (interleaved: "
                "every run records step breakdowns; files: those they hold). docs/explain.md");
  sub->add_flag("--counts", f->counts,
                "Interleaved mode: compare counted work only (ATen ops, allocations; on a GPU kernels, copies, syncs): "
                "one short block per side and no time checks, a gate that does not depend on the machine's load "
                "(docs/gate.md, \"Counted work\")")
      ->excludes("--blocks")
      ->excludes("--explain");
  sub->add_option("--out-dir", f->out_dir,
                  "Where session results, logs and gate.md/gate.json go (default results/gate/<UTC time>)")
      ->check(not_a_flag());
  sub->add_option("--markdown", f->markdown_path, "Write the verdict as Markdown (for a PR comment)")
      ->check(not_a_flag());
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
