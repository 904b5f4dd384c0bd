#include "history_confirm.h"

#include "cli/shared/cli_checks.h"
#include "cli/gate/gate_confirm.h"
#include "cli/gate/gate_flags.h"
#include "cli/gate/gate_session.h"
#include "tipbench/checked_text.h"
#include "tipbench/escape.h"
#include "tipbench/exit_codes.h"
#include "tipbench/gate/decision.h"
#include "tipbench/history/store.h"
#include "tipbench/run_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <utility>

namespace tipbench::cli {

namespace {

// "zero_grad/model:small_cnn/batch:32/arm:zero" -> the case and the arm.
std::pair<std::string, std::string> split_cell(const std::string& cell) {
  const auto at = cell.rfind("/arm:");
  if (at == std::string::npos) return {cell, ""};
  return {cell.substr(0, at), cell.substr(at + 5)};
}

// The `run` selection that measures the case: its suite, model and batch (its other parameters
// are the suite's own sweep, which the run covers).
std::vector<std::string> case_run_args(const gate::CellKey& key) {
  std::vector<std::string> args{"--suite", key.suite};
  std::istringstream parts(key.case_name);
  for (std::string part; std::getline(parts, part, '/');) {
    const auto colon = part.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = part.substr(0, colon), value = part.substr(colon + 1);
    if (name == "model") args.insert(args.end(), {"--model", value});
    if (name == "batch") args.insert(args.end(), {"--batch-size", value});
  }
  return args;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

const gate::Check* find_check(const gate::GateReport& report, const gate::CellKey& key) {
  for (const auto& c : report.checks) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

std::string short_sha(const std::string& sha) { return sha.empty() ? "-" : sha.substr(0, 12); }

}  // namespace

void add_confirm_flags(CLI::App* command, ConfirmOptions& o) {
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

std::string_view to_string(Sameness s) {
  switch (s) {
    case Sameness::different: return "DIFFERENT";
    case Sameness::same: return "SAME";
    case Sameness::run_more: break;
  }
  return "RUN MORE";
}

SeriesTarget target_of(const history::SeriesChange& change, const std::string& device, const ConfirmOptions& options) {
  if (!change.model_sha256.empty()) {
    throw UsageError(
        fmt::format("{} {} is a model file's series: compare its two builds with `tipbench gate "
                    "--base-binary B --head-binary H --run-arg=--model-file=F`",
                    change.cell, change.metric));
  }
  auto [case_name, arm] = split_cell(change.cell);
  SeriesTarget t{{change.suite, std::move(case_name), std::move(arm), change.metric}, device, 0};
  t.threshold =
      options.threshold_pct > 0 ? options.threshold_pct / 100 : std::max(0.01, std::abs(change.point.ratio - 1) / 2);
  return t;
}

BinarySource::BinarySource(ConfirmOptions options, std::string work_dir)
    : options_(std::move(options)), work_dir_(std::move(work_dir)) {
  if (options_.binaries.empty()) throw UsageError("--binaries is required: the path of each commit's tipbench");
  if (options_.binaries.find("{commit}") == std::string::npos) {
    throw UsageError(
        fmt::format("--binaries '{}' has no {{commit}}: each commit needs its own binary", options_.binaries));
  }
}

std::string BinarySource::binary_for(const std::string& commit) {
  if (commit.empty()) throw UsageError("a run on one side recorded no git commit: its build cannot be named");
  // The commit comes from the store: only a commit's hex digits may become part of a path that is
  // executed (a "../" would leave the builds folder).
  if (!is_git_sha(commit)) {
    throw InputError(
        fmt::format("the store names commit '{}', which is no git commit (40 or 64 hex digits): its "
                    "build is not looked for",
                    abbreviated(python_comment(commit), 80)));
  }
  const std::string path = replace_all(options_.binaries, "{commit}", commit);
  if (is_executable(path) || built_.contains(commit)) return path;
  if (options_.build.empty()) {
    throw UsageError(
        fmt::format("no executable for commit {} at {} (--build makes missing ones)", short_sha(commit), path));
  }
  const auto absolute = std::filesystem::absolute(path);
  std::filesystem::create_directories(absolute.parent_path());
  std::filesystem::create_directories(work_dir_);
  const std::string log = fmt::format("{}/build-{}.log", work_dir_, short_sha(commit));
  fmt::print(stderr, "history: building {} with --build (log: {})\n", short_sha(commit), log);
  ::setenv("TIPBENCH_COMMIT", commit.c_str(), 1);
  ::setenv("TIPBENCH_BINARY", absolute.c_str(), 1);
  const int code = spawn_logged({"/bin/sh", "-c", options_.build}, log);
  ::unsetenv("TIPBENCH_COMMIT");
  ::unsetenv("TIPBENCH_BINARY");
  if (code != 0)
    throw ChildRunError(fmt::format("the build of {} exited with {} (log: {})", short_sha(commit), code, log));
  if (!is_executable(path)) {
    throw ChildRunError(
        fmt::format("the build of {} left no executable at {} (log: {})", short_sha(commit), path, log));
  }
  built_[commit] = path;
  return path;
}

BuildVerdict compare_builds(const std::string& base_binary, const std::string& head_binary, const SeriesTarget& target,
                            const ConfirmOptions& options, const std::string& work_dir, const std::string& tag) {
  gate::GateConfig config;  // this one cell's metric only, at the target's threshold
  config.metrics = {{target.key.metric, target.threshold}};
  std::vector<std::string> args = case_run_args(target.key);
  if (!options.full) args.push_back("--quick");
  if (!target.device.empty()) args.insert(args.end(), {"--device", target.device});
  for (int blocks = options.blocks, round = 0;; blocks *= 2, ++round) {
    SessionPlan plan{.base_binary = base_binary,
                     .head_binary = head_binary,
                     .base_args = args,
                     .head_args = args,
                     .blocks = blocks,
                     .seed = options.seed + static_cast<std::uint64_t>(round),
                     .work_dir = fmt::format("{}/{}-{}blocks", work_dir, tag, blocks)};
    std::filesystem::create_directories(plan.work_dir);
    const SessionResult session = run_interleaved(plan, tag);
    write_result_atomically(session.base, plan.work_dir + "/base.json");
    write_result_atomically(session.head, plan.work_dir + "/head.json");
    auto report = gate::evaluate_gate(session.base, session.head, config, {.paired = true, .seed = plan.seed});
    gate::confirm_candidates(report, paired_remeasure(session.base, session.head, plan.work_dir, config, plan.seed),
                             config);
    BuildVerdict v;
    v.blocks = blocks;
    const gate::Check* check = find_check(report, target.key);
    if (!check || !check->comparison) {
      v.detail = fmt::format("{} was not measured by both builds (logs in {})", target.key.label(), plan.work_dir);
      return v;
    }
    const auto& estimate = check->comparison->test.estimate;
    std::tie(v.ratio, v.low, v.high) = std::tuple{estimate.ratio, estimate.ci_low, estimate.ci_high};
    v.detail = check->detail;
    if (check->status == gate::CheckStatus::regression) v.verdict = Sameness::different;
    if (check->status == gate::CheckStatus::pass) v.verdict = Sameness::same;
    if (v.verdict != Sameness::run_more || blocks * 2 > options.max_blocks) return v;
    fmt::print(stderr, "history: {}: x{:.3f} [{:.3f}, {:.3f}] cannot tell yet: {} blocks per side next\n", tag, v.ratio,
               v.low, v.high, blocks * 2);
  }
}

std::string confirm_work_dir(const ConfirmOptions& options, const std::string& what) {
  return options.out_dir.empty() ? fmt::format("results/history/{}-{}", what, compact_utc_timestamp())
                                 : options.out_dir;
}

int confirm_new_regressions(const history::DetectReport& report,
                            const std::map<std::int64_t, std::string>& device_of_run, const ConfirmOptions& options) {
  const std::string work_dir = confirm_work_dir(options, "confirm");
  BinarySource source(options, work_dir);
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
    const SeriesTarget target = target_of(change, options.device.empty() ? device : options.device, options);
    const auto v = compare_builds(source.binary_for(change.before_git), source.binary_for(change.after_git), target,
                                  options, work_dir, fmt::format("change{}", index));
    confirmed += v.verdict == Sameness::different;
    unsure += v.verdict == Sameness::run_more;
    fmt::print("  {:<9}  {}: x{:.3f} [{:.3f}, {:.3f}], {} blocks per side, threshold {:.1f}%: {}\n",
               to_string(v.verdict), what, v.ratio, v.low, v.high, v.blocks, 100 * target.threshold, v.detail);
  }
  if (index == 0) fmt::print("  no new regression to confirm\n");
  fmt::print("{} confirmed, {} not reproduced, {} need more runs\n", confirmed, index - confirmed - unsure, unsure);
  if (confirmed > 0) return exit_code::failed;
  return unsure > 0 ? exit_code::inconclusive : exit_code::ok;
}

}  // namespace tipbench::cli
