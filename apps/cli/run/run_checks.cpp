#include "run_checks.h"

#include "tipbench/common/atomic_file.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/common/json_number.h"
#include "tipbench/results/partial_run.h"
#include "tipbench/suite/registry.h"
#include "tipbench/machine/run_context.h"

#include "cli/shared/cli_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

#include <algorithm>
#include <filesystem>

namespace tipbench::cli {

namespace {

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

// A result records its command line (and --out) as JSON text, which must be UTF-8: found now, not
// when the first finished case is written.
std::optional<std::string> argv_problem(const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (!is_valid_utf8(argv[i])) {
      return fmt::format(
          "argument {} ('{}') is not valid UTF-8: a result records its command line as JSON text; "
          "rename the path",
          i, abbreviated(printable(argv[i])));
    }
  }
  return std::nullopt;
}

}  // namespace

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

std::optional<int> check_outputs(RunOptions& o, const std::vector<std::string>& argv, bool keeps_partial) {
  if (auto problem = argv_problem(argv)) return usage_error(*problem);
  if (o.out.empty()) o.out = fmt::format("results/runs/{}-{}.json", compact_utc_timestamp(), host_name());
  if (!output_file_writable("--out", o.out)) return exit_code::usage;
  if (!o.profile_dir.empty() && !output_dir_writable("--profile", o.profile_dir)) return exit_code::usage;
  if (keeps_partial) {
    // A run started again with the same --out (a requeued Slurm task) would replace the partial
    // file at its first finished case: the cases it holds are kept unless the user says otherwise.
    std::error_code ec;
    if (!o.force && std::filesystem::exists(partial_path_for(o.out), ec)) {
      return usage_error(fmt::format(
          "{} holds the finished cases of an interrupted run: finish it with `tipbench run --resume {}`, or start "
          "anew with --force (its cases are then lost)",
          abbreviated(partial_path_for(o.out)), abbreviated(partial_path_for(o.out))));
    }
    if (auto problem = output_file_problem(partial_path_for(o.out))) {
      return usage_error(
          fmt::format("{}: cannot keep finished cases there: {}", abbreviated(partial_path_for(o.out)), *problem));
    }
  }
  return std::nullopt;
}

int dry_run(RunOptions o, const RunPlan& plan, const std::vector<std::string>& argv) {
  if (auto code = check_outputs(o, argv, /*keeps_partial=*/o.resume.empty())) return *code;
  // The plan, one line per case with its arms: what a run with these flags would measure.
  std::size_t cases = 0;
  for (const Suite* s : plan.suites) {
    for (const auto& c : s->cases(plan.context)) {
      std::vector<std::string> arms;
      for (const auto& a : c.arms) arms.push_back(a.name);
      fmt::print("  {}  arms: {}\n", case_name(s->name(), c), fmt::join(arms, ", "));
      ++cases;
    }
  }
  fmt::print("run --dry-run: ok: {} suite(s), {} case(s) on {}; nothing measured\n", plan.suites.size(), cases,
             plan.context.device.str());
  return exit_code::ok;
}

}  // namespace tipbench::cli
