// Internal to the CLI: the options of `tipbench run`, as the flags set them. They are kept in a
// partial run file as JSON, so `run --resume FILE` finishes the run with the same ones. Example:
//   RunOptions o = run_options_from_json(partial.run_options);
//   auto diffs = run_option_differences(o, recorded);   // {"--blocks: 10 here, 8 in the run"}
#pragma once

#include "tipbench/settings.h"
#include "tipbench/suite.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tipbench::cli {

struct RunOptions {
  std::vector<std::string> suites{"all"};
  std::vector<std::string> models;
  std::string device = "auto";
  std::int64_t batch_size = 0;
  bool quick = false;
  int blocks = 0;  // 0: the preset's
  double threshold_pct = 0;
  std::string out;  // "": results/runs/<UTC timestamp>-<host>.json, fixed when the run starts
  std::uint64_t seed = 0;
  double inject_slowdown_pct = 0;  // gate-calibration test knob (docs/gate.md)
  std::string profile_dir;         // --profile: Kineto traces per arm after its last trial ("": off)
  int nproc = 1;          // > 1: launch this many local ranks (data_parallel)
  bool oversubscribe = false;  // CPU: allow more ranks than cores (up to kRanksPerCoreOversubscribed)
  // The options suites declare (Suite::options), every one with its value or its default.
  SuiteOptionValues suite_options;
  // Not measurement options: how this invocation behaves (never compared on --resume).
  std::string resume;  // a partial run file to finish
  bool verbose = false;
  int rendezvous_timeout_s = 60;  // a distributed launch: the wait for the store and every rank
};

// --oversubscribe's limit: more ranks than this per core only thrash (each loads LibTorch and
// spins its own intra-op threads), and at hundreds of ranks the machine runs out of memory.
inline constexpr int kRanksPerCoreOversubscribed = 4;

nlohmann::json run_options_to_json(const RunOptions& o);  // without resume and verbose
RunOptions run_options_from_json(const nlohmann::json& j);  // throws InputError on a bad document
// Every declared suite option at its default: what a run starts from before the flags.
SuiteOptionValues default_suite_options();
// "--blocks: 10 here, 8 in the partial run", per measurement option that differs.
std::vector<std::string> run_option_differences(const RunOptions& here, const RunOptions& recorded);

MeasureSettings measure_settings_from(const RunOptions& o);
SuiteContext suite_context_from(const RunOptions& o, const c10::Device& device);

}  // namespace tipbench::cli
