#include "run_resume.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace tipbench::cli {

namespace {

// Whether `path` lies inside `folder` (both resolved, symbolic links followed).
bool path_inside(const std::filesystem::path& folder, const std::string& path) {
  std::error_code ec;
  const auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
  if (ec) return false;
  const auto relative = resolved.lexically_relative(folder);
  return !relative.empty() && *relative.begin() != "..";
}

// A partial file is input like a command line: the paths it records are written (--out,
// --profile) or loaded and run (--model-file). Each must lie inside the folder the run is resumed
// from or the partial file's own folder, or be given on this command line too (the difference
// check then holds them equal).
std::optional<std::string> foreign_path_problem(const RunOptions& o, const RunOptions& recorded,
                                                const std::set<std::string>& typed) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto here = fs::weakly_canonical(fs::current_path(ec), ec);
  const auto beside = fs::weakly_canonical(fs::absolute(o.resume), ec).parent_path();
  const std::pair<const std::string*, const char*> paths[] = {
      {&recorded.out, "--out"}, {&recorded.model_file, "--model-file"}, {&recorded.profile_dir, "--profile"}};
  for (const auto& [path, flag] : paths) {
    if (path->empty() || typed.contains(flag) || path_inside(here, *path) || path_inside(beside, *path)) continue;
    return fmt::format(
        "--resume {}: it records {} {}, outside this folder and the partial file's; a partial file is trusted "
        "with no path beyond them: give {} {} on this command line to use it",
        o.resume, flag, abbreviated(*path), flag, abbreviated(*path));
  }
  return std::nullopt;
}

}  // namespace

// --resume FILE: the options of the interrupted run, checked as the command line's would be.
// Flags given with it must agree with them; only those given are compared.
std::optional<std::string> resume_options(RunOptions& o, const std::set<std::string>& typed, PartialRun& partial) {
  // The paths first, before anything else reads the file's options. InputError: caught by the caller.
  if (auto problem = foreign_path_problem(o, run_options_from_json(read_partial_run(o.resume).run_options), typed))
    return problem;
  ResumeFile file = read_resume_file(o.resume, run_option_catalogue());
  partial = std::move(file.partial);
  RunOptions recorded = std::move(file.options);
  RunOptions here = o;
  if (here.out.empty()) here.out = recorded.out;
  if (const auto diffs = run_option_differences(here, recorded, typed); !diffs.empty()) {
    return fmt::format(
        "--resume {}: this command's options differ from the interrupted run's ({}); run "
        "`tipbench run --resume {}` alone to finish it as it was started",
        o.resume, fmt::join(diffs, "; "), o.resume);
  }
  recorded.resume = o.resume;
  recorded.verbose = o.verbose;
  recorded.rendezvous_timeout_s = o.rendezvous_timeout_s;
  recorded.dry_run = o.dry_run;
  recorded.time_budget_s = o.time_budget_s;
  recorded.estimate_from = o.estimate_from;
  o = recorded;
  return std::nullopt;
}

// The machine and build must be the ones that measured the finished cases.
std::optional<std::string> resume_context_problem(const RunContext& here, const RunContext& recorded,
                                                  const std::string& file) {
  std::vector<std::string> diffs;
  if (here.fingerprint_slug != recorded.fingerprint_slug) {
    diffs.push_back(fmt::format("fingerprint {} here, {} in the run (fields differ: {})", here.fingerprint_slug,
                                recorded.fingerprint_slug,
                                fmt::join(fingerprint_differences(recorded.fingerprint, here.fingerprint), ", ")));
  }
  if (here.tipbench_version != recorded.tipbench_version || here.git.sha != recorded.git.sha) {
    diffs.push_back(fmt::format("tipbench {} (git {}) here, {} (git {}) in the run", here.tipbench_version,
                                here.git.sha.empty() ? "-" : here.git.sha.substr(0, 12), recorded.tipbench_version,
                                recorded.git.sha.empty() ? "-" : recorded.git.sha.substr(0, 12)));
  }
  if (here.device != recorded.device)
    diffs.push_back(fmt::format("device {} here, {} in the run", here.device, recorded.device));
  const auto sha = [](const RunContext& c) {
    return c.model_file.is_null() ? std::string("-") : c.model_file.value("sha256", "-");
  };
  if (sha(here) != sha(recorded)) {
    diffs.push_back(
        fmt::format("model file sha256 {} here, {} in the run", sha(here).substr(0, 12), sha(recorded).substr(0, 12)));
  }
  if (diffs.empty()) return std::nullopt;
  return fmt::format(
      "--resume {}: the finished cases were measured elsewhere: {}; a result must come from one "
      "machine and build (start the run again instead)",
      file, fmt::join(diffs, "; "));
}

RunContext resumed_context(const RunContext& here, const PartialRun& partial, const std::string& file) {
  RunContext context = partial.result.context;
  for (const auto& w : here.warnings) {
    if (std::find(context.warnings.begin(), context.warnings.end(), w) == context.warnings.end()) {
      context.warnings.push_back(w);
    }
  }
  context.warnings.push_back(fmt::format("resumed at {} from {}: {} case(s) were measured before the interruption",
                                         here.timestamp_utc, file, count_cases(partial.result)));
  return context;
}

std::map<std::string, CaseResult> finished_cases_of(const Result& r) {
  std::map<std::string, CaseResult> out;
  for (const auto& s : r.suites)
    for (const auto& c : s.cases) out.emplace(c.name, c);
  return out;
}

std::string result_write_failure(const std::string& reason, const std::string& partial_path) {
  if (partial_path.empty()) return fmt::format("cannot write the result: {} (no finished case was kept)", reason);
  return fmt::format(
      "cannot write the result: {} (the finished cases are kept in {}: finish with tipbench run "
      "--resume {})",
      reason, partial_path, partial_path);
}

std::string resume_hint(int cases, const std::string& partial_path, const CaseInProgress* in_progress) {
  const std::string blocks =
      in_progress ? fmt::format(" and {} block(s) of {}", in_progress->blocks_done, in_progress->case_result.name) : "";
  return fmt::format("\ninterrupted: {} case(s){} kept in {}; finish the run with: tipbench run --resume {}", cases,
                     blocks, partial_path, partial_path);
}

}  // namespace tipbench::cli
