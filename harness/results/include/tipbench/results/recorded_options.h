// The options of `tipbench run` as the flags set them, and as a partial run file records them
// so that `run --resume FILE` finishes the run with the same ones. No LibTorch here: the reader
// of a partial file is fuzzed with the other file readers (scripts/fuzz-readers.sh). A recorded
// option is checked by the very rules the command line's flag is (one range per flag, kept
// here), and against the settings the recorded result says it ran with. Example:
//   const ResumeFile r = read_resume_file("r.json.partial", catalogue);   // InputError when damaged
//   auto diffs = run_option_differences(here, r.options, typed_flags);    // {"--blocks: 10 here, 8 in ..."}
#pragma once

#include "tipbench/results/partial_run.h"
#include "tipbench/statistics/settings.h"
#include "tipbench/results/suite_options.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tipbench {

struct RunOptions {
  std::vector<std::string> suites{"all"};
  std::vector<std::string> models;
  std::string device = "auto";
  std::int64_t batch_size = 0;
  bool quick = false;
  int blocks = 0;             // a fixed block count (0: the preset's)
  int max_blocks = 0;         // sequential blocks up to this many (0: the preset's)
  double precision_pct = 0;   // a comparison is precise at this relative half-width (0: the preset's)
  double trial_time_s = 0;    // each trial times at least this long (0: the preset's)
  bool fresh_trials = false;  // every trial builds its workload anew (MeasureSettings::keep_workloads)
  double threshold_pct = 0;
  std::string out;  // "": results/runs/<UTC timestamp>-<host>.json, fixed when the run starts
  std::uint64_t seed = 0;
  double inject_slowdown_pct = 0;     // gate-calibration test knob (docs/gate.md)
  std::string profile_dir;            // --profile: Kineto traces per arm after its last trial ("": off)
  std::string inject_slowdown_op;     // --inject-slowdown-op: spend the knob inside this ATen op
  bool explain = false;               // --explain: break each trial's extra profiled steps down (explain.h)
  int explain_steps = 3;              // --explain-steps: how many
  int count_steps = 2;                // --count-steps: counted work's steps per arm (0: off)
  std::string instructions = "auto";  // --instructions: auto (perf_event), callgrind or off
  int inject_extra_ops = 0;           // --inject-extra-ops: count-gate calibration knob (docs/gate.md)
  int nproc = 1;                      // > 1: launch this many local ranks (data_parallel)
  bool oversubscribe = false;         // CPU: allow more ranks than cores (up to kRanksPerCoreOversubscribed)
  // A user's TorchScript model (docs/own-model.md): every suite runs on it instead of --model.
  std::string model_file;              // "": none
  bool allow_trace = false;            // accept a traced file
  std::vector<std::string> allow_ops;  // --allow-op: ops beyond a .pt2's allow-list ("NS::NAME", "NS::*")
  std::string model_input;             // "C,H,W" for a file without metadata ("": the file's)
  std::int64_t model_classes = 0;      // K for a file without metadata (0: the file's)
  std::string jit_optimize = "on";     // the TorchScript graph executor's optimisation: on or off
  // The options suites declare (Suite::options), every one with its value or its default.
  SuiteOptionValues suite_options;
  // Not measurement options: how this invocation behaves (never recorded, never compared).
  std::string resume;  // a partial run file to finish
  bool force = false;  // start although <out>.partial holds an interrupted run's cases (they are lost)
  bool verbose = false;
  int rendezvous_timeout_s = 60;  // a distributed launch: the wait for the store and every rank
  bool dry_run = false;           // check every input and output, measure nothing (the gate asks its children)
  // This command's wall time for its cases (0: none): a resumed run gets the budget of the
  // command that resumes it, so it is neither recorded nor compared.
  double time_budget_s = 0;
  std::string estimate_from;  // --time-budget: an earlier result whose case times forecast the cuts
};

// --oversubscribe's limit: more ranks than this per core only thrash (each loads LibTorch and
// spins its own intra-op threads), and at hundreds of ranks the machine runs out of memory.
inline constexpr int kRanksPerCoreOversubscribed = 4;

// The accepted range of each numeric flag, shared by the command line's checks and the recorded
// options' (0 means "the preset's" for --blocks, --threshold and --batch-size).
template <typename T>
struct OptionRange {
  T min, max;
};
inline constexpr OptionRange<std::int64_t> kBlocksRange{1, 10000};
inline constexpr OptionRange<std::int64_t> kBatchSizeRange{1, 1'000'000'000};
inline constexpr OptionRange<std::int64_t> kNprocRange{1, 1024};
inline constexpr OptionRange<double> kThresholdPctRange{0.01, 100.0};
inline constexpr OptionRange<double> kPrecisionPctRange{0.01, 100.0};
inline constexpr OptionRange<double> kTrialTimeRange{0.01, 3600.0};
inline constexpr OptionRange<std::int64_t> kCountStepsRange{1, 100};
inline constexpr OptionRange<std::int64_t> kInjectExtraOpsRange{1, 100000};
inline constexpr OptionRange<double> kTimeBudgetRange{1.0, 7 * 24 * 3600.0};
inline constexpr OptionRange<double> kInjectSlowdownPctRange{0.0, 1000.0};
inline constexpr OptionRange<std::int64_t> kExplainStepsRange{1, 100};
// What --inject-slowdown-op accepts: a namespaced ATen op name ("aten::addmm").
bool is_op_name(const std::string& text);
inline constexpr OptionRange<std::int64_t> kModelClassesRange{1, 1'000'000};

// The warm-up of a run on a model file takes at least this many steps: TorchScript's profiling
// executor profiles the first run (getNumProfiledRuns, 1), builds the optimised plan at the next,
// and its default fusion strategy may specialise again for the next shapes it sees.
inline constexpr int kModelFileWarmupMinSteps = 5;

// What a recorded option may name: the suites, models and suite options of this build.
struct RunOptionCatalogue {
  std::vector<std::string> suites;
  std::vector<std::string> models;
  std::vector<SuiteOption> options;
};

nlohmann::json run_options_to_json(const RunOptions& o);    // without the invocation's own options
RunOptions run_options_from_json(const nlohmann::json& j);  // throws InputError on a bad document
// Why these options could not have come from the command line (each problem as the flag's own
// check words it); empty when they could.
std::vector<std::string> run_option_problems(const RunOptions& o, const RunOptionCatalogue& catalogue);
// The model-file flags' own problems: one without --model-file, --model beside it, a malformed
// --model-input or --jit-optimize (part of run_option_problems; the CLI asks before loading).
std::vector<std::string> model_file_problems(const RunOptions& o);
// "--blocks: 10 here, 8 in the partial run", per measurement option that differs, among the flags
// in `typed` (as typed: "--blocks", "--bucket-mb"): a flag not given does not disagree.
std::vector<std::string> run_option_differences(const RunOptions& here, const RunOptions& recorded,
                                                const std::set<std::string>& typed);
MeasureSettings measure_settings_from(const RunOptions& o);

struct ResumeFile {
  PartialRun partial;
  RunOptions options;
};
// read_partial_run, then its options read and checked (run_option_problems) and compared with the
// settings its result recorded. Throws InputError naming the file and the first problems.
ResumeFile read_resume_file(const std::string& path, const RunOptionCatalogue& catalogue);

}  // namespace tipbench
