#include "history_bisect.h"

#include "cli/shared/cli_checks.h"
#include "cli/shared/child_runs.h"
#include "tipbench/common/atomic_file.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/history/bisect.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <vector>

namespace tipbench::cli {

namespace {

struct Commit {
  std::string sha, subject;
};

// `git -C repo ARGS`, its output (stdout and stderr) in a log; throws UsageError naming the log
// when git says no.
std::string git(const std::string& repo, std::vector<std::string> args, const std::string& log) {
  args.insert(args.begin(), {"/usr/bin/env", "git", "-C", repo});
  const int code = spawn_logged(args, log);
  std::ifstream in(log);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (code != 0) {
    const auto first_line = text.substr(0, text.find('\n'));
    throw UsageError(
        fmt::format("git {} in {} failed: {}", args[4], repo, first_line.empty() ? "no output" : first_line));
  }
  return text;
}

std::string full_sha(const BisectRequest& r, const std::string& revision, const std::string& work_dir) {
  std::string out;
  try {
    out = git(r.repo, {"rev-parse", "--verify", "--quiet", revision + "^{commit}"}, work_dir + "/git.log");
  } catch (const UsageError&) {
    throw UsageError(fmt::format("'{}' is not a commit of {}", revision, r.repo));
  }
  return out.substr(0, out.find('\n'));
}

// The first-parent line after `good` up to `bad`, oldest first; `good` must be an ancestor of `bad`.
std::vector<Commit> commits_between(const BisectRequest& r, const std::string& good, const std::string& bad,
                                    const std::string& work_dir) {
  const std::string log = work_dir + "/git.log";
  if (std::stoi("0" + git(r.repo, {"rev-list", "--count", good + ".." + bad}, log)) == 0) {
    throw UsageError(fmt::format("no commit after {} up to {} in {}: nothing to bisect", good.substr(0, 12),
                                 bad.substr(0, 12), r.repo));
  }
  git(r.repo, {"merge-base", "--is-ancestor", good, bad}, log);
  std::vector<Commit> commits;
  std::istringstream lines(
      git(r.repo, {"log", "--first-parent", "--reverse", "--format=%H%x09%s", good + ".." + bad}, log));
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos) commits.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return commits;
}

// The newest regression of the one matching series, new ones first.
const history::SeriesChange* pick_regression(const history::DetectReport& report) {
  const history::SeriesChange* pick = nullptr;
  std::set<std::string> series;
  for (const auto& c : report.changes) {
    if (!c.regression || !c.expected.empty()) continue;
    series.insert(fmt::format("{} {} on {}", c.cell, c.metric, c.hardware));
    if (!pick || (c.is_new && !pick->is_new) || (c.is_new == pick->is_new && c.after_time >= pick->after_time))
      pick = &c;
  }
  if (series.size() > 1) {
    std::string names;
    for (const auto& s : series) names += "\n  " + s;
    throw UsageError(fmt::format("{} series have a regression; name one with --series:{}", series.size(), names));
  }
  return pick;
}

struct Step {
  Commit commit;
  history::BuildVerdict verdict;
};

nlohmann::json step_json(const Step& s) {
  return {
      {"commit", s.commit.sha},     {"subject", s.commit.subject}, {"verdict", history::to_string(s.verdict.verdict)},
      {"ratio", s.verdict.ratio},   {"ratio_low", s.verdict.low},  {"ratio_high", s.verdict.high},
      {"blocks", s.verdict.blocks}, {"detail", s.verdict.detail}};
}

}  // namespace

int bisect_regression(const history::DetectReport& report, const std::map<std::int64_t, std::string>& device_of_run,
                      const BisectRequest& request, const history::ConfirmOptions& options) {
  const history::SeriesChange* change = pick_regression(report);
  if (!change) {
    fmt::print("no regression found in {} series{}: nothing to bisect\n", report.series,
               report.request.filter.empty() ? "" : " matching '" + report.request.filter + "'");
    return exit_code::ok;
  }
  if ((request.good.empty() && change->before_git.empty()) || (request.bad.empty() && change->after_git.empty())) {
    throw UsageError("the runs on either side recorded no git commit: give --good and --bad");
  }
  const std::string work_dir = history::confirm_work_dir(options, "bisect");
  std::filesystem::create_directories(work_dir);
  // Full SHAs, as the binaries' template and the runs name them (a user may type a short one).
  const std::string good = full_sha(request, request.good.empty() ? change->before_git : request.good, work_dir);
  const std::string bad = full_sha(request, request.bad.empty() ? change->after_git : request.bad, work_dir);
  const auto commits = commits_between(request, good, bad, work_dir);
  const auto device = device_of_run.contains(change->after_run) ? device_of_run.at(change->after_run) : "";
  const history::SeriesTarget target =
      history::target_of(*change, options.device.empty() ? device : options.device, options);
  history::BinarySource source(options, work_dir);
  const std::string good_binary = source.binary_for(good);
  fmt::print("bisect {} {} on {}: {} commit(s) after {} up to {}, threshold {:.1f}%, work dir {}\n", change->cell,
             change->metric, change->hardware, commits.size(), good.substr(0, 12), bad.substr(0, 12),
             100 * target.threshold, work_dir);

  std::vector<Step> steps;
  const auto search = history::bisect(commits.size(), [&](std::size_t i) {
    const auto v = history::compare_builds(good_binary, source.binary_for(commits[i].sha), target, options, work_dir,
                                           fmt::format("step{}-{}", steps.size() + 1, commits[i].sha.substr(0, 12)));
    steps.push_back({commits[i], v});
    fmt::print("  {:<9}  {}  x{:.3f} [{:.3f}, {:.3f}]  {} blocks  {}\n", history::to_string(v.verdict),
               commits[i].sha.substr(0, 12), v.ratio, v.low, v.high, v.blocks, commits[i].subject);
    return v.verdict;
  });
  const Commit& culprit = commits[search.first_bad];
  const auto short_at = [&](std::ptrdiff_t i) {
    return i < 0 ? good.substr(0, 12) : commits[static_cast<std::size_t>(i)].sha.substr(0, 12);
  };
  std::string outcome;
  int code = exit_code::failed;
  switch (search.outcome) {
    case history::BisectSearch::Outcome::found:
      outcome = fmt::format("first commit with the regression: {} {}", culprit.sha, culprit.subject);
      break;
    case history::BisectSearch::Outcome::not_reproduced:
      outcome = "not reproduced: the build at the bad end measures the same as the good one";
      code = exit_code::ok;
      break;
    case history::BisectSearch::Outcome::ends_undecided:
      outcome = "the ends cannot be told apart at --max-blocks: run with more blocks";
      code = exit_code::inconclusive;
      break;
    case history::BisectSearch::Outcome::stopped:
      outcome = fmt::format(
          "stopped: {} cannot be told from the good build; the first commit with the regression is after {} and "
          "at or before {}",
          commits[search.undecided].sha.substr(0, 12), short_at(search.last_good),
          short_at(static_cast<std::ptrdiff_t>(search.first_bad)));
      code = exit_code::inconclusive;
      break;
  }
  fmt::print("{}\n", outcome);
  if (!request.json_out.empty()) {
    nlohmann::json j{{"series", change->cell + " " + change->metric},
                     {"hardware", change->hardware},
                     {"good", good},
                     {"bad", bad},
                     {"threshold", target.threshold},
                     {"outcome", outcome},
                     {"exit_code", code},
                     {"first_bad", code == exit_code::failed ? culprit.sha : ""},
                     {"steps", nlohmann::json::array()}};
    for (const auto& s : steps) j["steps"].push_back(step_json(s));
    write_file_atomically(request.json_out, j.dump(2) + "\n");
  }
  return code;
}

}  // namespace tipbench::cli
