#include "tipbench/history/confirm.h"

#include "tipbench/common/checked_text.h"
#include "tipbench/processes/child_runs.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/escape.h"
#include "tipbench/gate/decision.h"
#include "tipbench/gate/explain_checks.h"
#include "tipbench/gate/interleaved_session.h"
#include "tipbench/gate/remeasure.h"
#include "tipbench/environment/this_process.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <utility>

namespace tipbench::history {

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

}  // namespace

std::string_view to_string(BuildSameness s) {
  switch (s) {
    case BuildSameness::different: return "DIFFERENT";
    case BuildSameness::same: return "SAME";
    case BuildSameness::undecided: break;
  }
  return "RUN MORE";
}

SeriesTarget target_of(const SeriesChange& change, const std::string& device, const ConfirmOptions& options) {
  if (!change.model_sha256.empty()) {
    throw InputError(
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
  if (options_.binaries.empty()) throw InputError("--binaries is required: the path of each commit's tipbench");
  if (options_.binaries.find("{commit}") == std::string::npos) {
    throw InputError(
        fmt::format("--binaries '{}' has no {{commit}}: each commit needs its own binary", options_.binaries));
  }
}

std::string BinarySource::binary_for(const std::string& commit) {
  if (commit.empty()) throw InputError("a run on one side recorded no git commit: its build cannot be named");
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
    throw InputError(
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
    gate::SessionPlan plan{.base_binary = base_binary,
                           .head_binary = head_binary,
                           .base_args = args,
                           .head_args = args,
                           .blocks = blocks,
                           .seed = options.seed + static_cast<std::uint64_t>(round),
                           .work_dir = fmt::format("{}/{}-{}blocks", work_dir, tag, blocks)};
    std::filesystem::create_directories(plan.work_dir);
    const gate::SessionResult session = gate::run_interleaved(plan, tag);
    write_result_atomically(session.base, plan.work_dir + "/base.json");
    write_result_atomically(session.head, plan.work_dir + "/head.json");
    auto report = gate::evaluate_gate(session.base, session.head, config, {.paired = true, .seed = plan.seed});
    gate::confirm_candidates(
        report, gate::paired_remeasure(session.base, session.head, plan.work_dir, config, plan.seed), config);
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
    if (check->status == gate::CheckStatus::regression) {
      v.verdict = BuildSameness::different;
      gate::explain_checks(report, session.base, session.head, /*paired=*/true, /*every=*/false);
      v.why = find_check(report, target.key)->why;
    }
    if (check->status == gate::CheckStatus::pass) v.verdict = BuildSameness::same;
    if (v.verdict != BuildSameness::undecided || blocks * 2 > options.max_blocks) return v;
    fmt::print(stderr, "history: {}: x{:.3f} [{:.3f}, {:.3f}] cannot tell yet: {} blocks per side next\n", tag, v.ratio,
               v.low, v.high, blocks * 2);
  }
}

std::string confirm_work_dir(const ConfirmOptions& options, const std::string& what) {
  return options.out_dir.empty() ? fmt::format("results/history/{}-{}", what, compact_utc_timestamp())
                                 : options.out_dir;
}

}  // namespace tipbench::history
