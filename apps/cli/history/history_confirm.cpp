#include "history_confirm.h"

#include "cli/shared/cli_checks.h"
#include "tipbench/common/checked_text.h"
#include "tipbench/common/exit_codes.h"

#include <fmt/format.h>

namespace tipbench::cli {

void add_confirm_flags(CLI::App* command, history::ConfirmOptions& o) {
  command
      ->add_option("--binaries", o.binaries,
                   "Each commit's tipbench: a path with {commit} (the full SHA), e.g. builds/{commit}/tipbench")
      ->check(not_a_flag());
  command
      ->add_option("--build", o.build,
                   "Shell command that makes a missing binary: build $TIPBENCH_COMMIT, write it to $TIPBENCH_BINARY")
      ->check(not_a_flag());
  command->add_option("--device", o.device, "Device of the comparison runs (default: the series' runs' device)")
      ->check(not_a_flag());
  command
      ->add_option("--blocks", o.blocks,
                   "Interleaved blocks per side (default 6; doubled while the verdict is "
                   "RUN MORE, up to --max-blocks)")
      ->check(whole_number(3, 1000));
  command->add_option("--max-blocks", o.max_blocks, "Most blocks per side before RUN MORE is the answer (default 24)")
      ->check(whole_number(3, 1000));
  command
      ->add_option("--threshold", o.threshold_pct,
                   "Change that counts as DIFFERENT, in percent (default: half the change found, at least 1)")
      ->check(real_number(0.1, 100.0));
  command->add_flag("--full", o.full, "Full trials instead of --quick ones");
  command->add_option("--out-dir", o.out_dir, "Per-session results and logs (default results/history/<what>-<time>)")
      ->check(not_a_flag());
  command->add_option("--seed", o.seed, "Block order and bootstrap seed (default 0)")->check(seed_value());
}

int confirm_new_regressions(const history::DetectReport& report,
                            const std::map<std::int64_t, std::string>& device_of_run,
                            const history::ConfirmOptions& options) {
  const std::string work_dir = history::confirm_work_dir(options, "confirm");
  history::BinarySource source(options, work_dir);
  int confirmed = 0, unsure = 0, index = 0;
  fmt::print("\nconfirm (interleaved gate, work dir {}):\n", work_dir);
  for (const auto& change : report.changes) {
    if (!change.regression || !change.is_new || !change.expected.empty()) continue;
    ++index;
    const std::string what = fmt::format("{} {} ({} -> {})", change.cell, change.metric, short_sha(change.before_git),
                                         short_sha(change.after_git));
    if (change.before_git == change.after_git) {  // a stack upgrade under one commit: no build differs
      ++unsure;
      fmt::print(
          "  RUN MORE   {}: one commit on both sides{}; compare the two stacks' builds with `tipbench gate "
          "--base-binary --head-binary`\n",
          what, change.software_change.empty() ? "" : " (" + change.software_change + ")");
      continue;
    }
    if (!change.model_sha256.empty()) {  // a user's model file: its builds need the file too
      ++unsure;
      fmt::print(
          "  RUN MORE   {}: a model file's series; compare its builds with `tipbench gate --base-binary "
          "--head-binary --run-arg=--model-file=F`\n",
          what);
      continue;
    }
    const auto device = device_of_run.contains(change.after_run) ? device_of_run.at(change.after_run) : "";
    const history::SeriesTarget target =
        history::target_of(change, options.device.empty() ? device : options.device, options);
    const auto v = history::compare_builds(source.binary_for(change.before_git), source.binary_for(change.after_git),
                                           target, options, work_dir, fmt::format("change{}", index));
    confirmed += v.verdict == history::BuildSameness::different;
    unsure += v.verdict == history::BuildSameness::undecided;
    fmt::print("  {:<9}  {}: x{:.3f} [{:.3f}, {:.3f}], {} blocks per side, threshold {:.1f}%: {}\n",
               history::to_string(v.verdict), what, v.ratio, v.low, v.high, v.blocks, 100 * target.threshold, v.detail);
    if (v.why) {
      fmt::print("             why:\n");
      for (const auto& line : explanation_lines(*v.why)) fmt::print("               {}\n", line);
    }
  }
  if (index == 0) fmt::print("  no new regression to confirm\n");
  fmt::print("{} confirmed, {} not reproduced, {} need more runs\n", confirmed, index - confirmed - unsure, unsure);
  if (confirmed > 0) return exit_code::failed;
  return unsure > 0 ? exit_code::inconclusive : exit_code::ok;
}

}  // namespace tipbench::cli
