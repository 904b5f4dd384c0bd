// The work of an unfinished run, kept beside its --out while it runs: rewritten atomically after
// every finished case, removed once the result is written. `tipbench run --resume FILE` finishes
// the run from it. Example:
//   tipbench::write_partial_run({out, options_json, result_so_far}, tipbench::partial_path_for(out));
//   tipbench::PartialRun p = tipbench::read_partial_run("results/runs/x.json.partial");  // InputError
#pragma once

#include "tipbench/result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace tipbench {

inline constexpr int kPartialRunVersion = 1;

struct PartialRun {
  std::string out;             // where the finished result goes
  nlohmann::json run_options;  // the CLI's options of the run (opaque here)
  Result result;               // context + every finished case (suites in run order)
};

// "<out>.partial": next to the result, so it lands on the same filesystem.
std::string partial_path_for(const std::string& out);
// Atomic (write_file_atomically); throws std::runtime_error.
void write_partial_run(const PartialRun& partial, const std::string& path);
// Throws InputError naming the file: missing, not JSON, not a partial run, a bad result inside.
PartialRun read_partial_run(const std::string& path);

int count_cases(const Result& result);

}  // namespace tipbench
