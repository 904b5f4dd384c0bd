// The work of an unfinished run, kept beside its --out while it runs: rewritten atomically after
// every finished case and every block of the case in progress, removed once the result is written. `tipbench run
// --resume FILE` finishes the run from it. Example:
//   tipbench::write_partial_run({out, options_json, result_so_far, std::nullopt}, tipbench::partial_path_for(out));
//   tipbench::PartialRun p = tipbench::read_partial_run("results/runs/x.json.partial");  // InputError
//   tipbench::Result r = tipbench::read_result_or_partial("x.json.partial");  // finished cases, warned
#pragma once

#include "tipbench/results/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace tipbench {

inline constexpr int kPartialRunVersion = 1;

// The case a run was measuring when it stopped: the blocks it finished, kept so that a long case
// can finish across two commands (`--resume` continues its blocks; the statistics see one case).
struct CaseInProgress {
  std::string suite;
  CaseResult case_result;  // its arms with the trials of blocks 0 .. blocks_done - 1
  int blocks_done = 0;
};

struct PartialRun {
  std::string out;                            // where the finished result goes
  nlohmann::json run_options;                 // the CLI's options of the run (opaque here)
  Result result;                              // context + every finished case (suites in run order)
  std::optional<CaseInProgress> in_progress;  // since sequential blocks; never shown as a result
};

// "<out>.partial": next to the result, so it lands on the same filesystem.
std::string partial_path_for(const std::string& out);
// Atomic (write_file_atomically); throws std::runtime_error.
void write_partial_run(const PartialRun& partial, const std::string& path);
// Throws InputError naming the file: missing, not JSON, not a partial run, a bad result inside.
PartialRun read_partial_run(const std::string& path);
// For readers that only show runs (compare, report): a result file as read_result reads it, or a
// partial run file's finished cases with a context warning that says so (an interrupted run on a
// lent GPU is often all there is). Writers of baselines and history keep read_result, which
// refuses a partial run file. Throws InputError as those two do.
Result read_result_or_partial(const std::string& path);

int count_cases(const Result& result);

}  // namespace tipbench
