// The result document (schema v1): one per `tipbench run`. Context and fingerprint, then
// suites -> cases -> arms -> trials with raw samples, summaries and comparisons. Units are in
// the key names. docs/result-schema.md is the reference. Example:
//   tipbench::Result r = tipbench::read_result("results/runs/x.json");   // throws InputError
//   tipbench::write_result_atomically(r, "out.json");
#pragma once

#include "tipbench/statistics/block_looks.h"
#include "tipbench/results/chart_kind.h"
#include "tipbench/environment/fingerprint.h"
#include "tipbench/statistics/settings.h"
#include "tipbench/statistics/stats.h"
#include "tipbench/results/step_breakdown.h"
#include "tipbench/results/step_counts.h"
#include "tipbench/results/levels.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tipbench {

inline constexpr int kSchemaMajor = 1;
// 1.1: arm status "invalid"; 1.2: CPU time, profiles; 1.3: source claims; 1.4: a suite's chart kind;
// 1.5: model file; 1.6: conditions; 1.7: sequential blocks (a comparison's stop reason, t-intervals);
// 1.8: a trial's reused_workload (kept workloads); a case's wall_s and budget_cut (--time-budget)
// 1.9: verdict under_threshold; 1.10: Python's defaults as baselines, timed peak, FLOPs;
// 1.11: steps timed in the Python worker (the compile suite, python_eager arms: info.step)
// 1.12: a trial's step breakdown (`run --explain`: step_breakdown.h)
// 1.13: the CUDA breakdown's device_events_per_step and its peak less other kept arms' memory;
// ddp followers' peak_memory_mb over the timed steps
// 1.14: counted work: an arm's block-0 trial's step counts (step_counts.h); settings.count_steps
// 1.15: counted CPU instructions (counts.instructions_per_step, its counter); settings.instructions
// and settings.inject_extra_ops
// 1.16: the instruction counter's own spread over the counted steps (counts.instructions_spread)
// and oneDNN's ISA cap while counting (counts.instructions_onednn_isa)
inline constexpr int kSchemaMinor = 16;
std::string schema_version();  // "1.16"
// "1.9" -> {1, 9}; a part that is no number reads as -1. Readers that treat older documents
// differently ask it (result.cpp's upgrades, reports/mfu.h).
struct SchemaVersion {
  int major = -1;
  int minor = -1;
  bool before(int major_then, int minor_then) const {
    return major < major_then || (major == major_then && minor < minor_then);
  }
};
SchemaVersion parse_schema_version(const std::string& text);

// Bad input from outside (unreadable file, corrupt JSON, wrong schema): a clear message, exit 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The top-level key that tells a partial run file (partial_run.h) from a result document: a
// reader of results refuses such a file by name.
inline constexpr const char* kPartialRunMarker = "tipbench_partial_run";

// A JSON document from a file someone gave: a folder, a file that cannot be opened or read, and
// text that is no JSON are InputError naming the path and what it should have been ("result").
nlohmann::ordered_json read_json_file(const std::string& path, const std::string& what);

struct MemoryUse {
  // CUDA caching allocator peaks during the trial (prepare + warm-up + timed steps).
  std::optional<std::int64_t> peak_allocated_bytes;
  std::optional<std::int64_t> peak_reserved_bytes;
  // CUDA, since schema 1.10: the allocated peak over the timed steps alone, without what the
  // build and warm-up held for a while (an autotuner's workspaces: cudnn_benchmark's note).
  std::optional<std::int64_t> timed_peak_allocated_bytes;
  // CPU: growth of the peak resident set over the resident set before the trial.
  std::optional<std::int64_t> peak_rss_growth_bytes;
};

struct Trial {
  int block = 0;
  int position = 0;  // place of this arm in the block's shuffled order
  int warmup_steps = 0;
  bool warmup_stable = false;
  // The trial took over the workload of the arm's previous trial (Workload::keep_between_trials):
  // no build, a re-warm until the step time was back at that trial's.
  bool reused_workload = false;
  std::int64_t samples_per_step = 0;
  std::vector<double> step_times_ms;
  // CPU devices: the process's CPU time (all threads) of each timed step; empty on CUDA.
  std::vector<double> step_cpu_times_ms;
  double throughput_samples_per_s = 0;  // total samples / total timed time of the trial
  MemoryUse memory;
  std::map<std::string, double> metrics;  // the workload's own measurements (Workload::metrics)
  // `run --explain`: a few more steps after the timed ones, profiled (never timed); since 1.12.
  std::optional<StepBreakdown> breakdown;
  // Counted work (since 1.14): the ops, allocations and device events of a few untimed steps,
  // counted in the arm's block-0 trial only (step_counts.h).
  std::optional<StepCounts> counts;
};

// CPU milliseconds per timed step of a trial (total over its steps); nullopt when not recorded.
std::optional<double> cpu_time_per_step_ms(const Trial& t);

struct ArmResult;
// An arm's counted work: its first trial that counted (nullptr when none did).
const StepCounts* counts_of(const ArmResult& arm);

// One operator's share of a profiled step (Kineto, self time: its children excluded).
struct OpTime {
  std::string name;  // "aten::mkldnn_convolution", or a CUDA kernel's name
  double self_ms_per_step = 0;
  std::int64_t calls_per_step = 0;
};

// `run --profile DIR`: a few steps after the arm's last timed trial, under the profiler.
struct ArmProfile {
  std::string trace_file;  // Chrome-trace JSON as written (DIR/<arm>.trace.json)
  int steps = 0;
  std::vector<OpTime> top_cpu_ops;       // the five largest by self time
  std::vector<OpTime> top_cuda_kernels;  // CUDA devices only
  std::string error;                     // why no trace was written ("" when it was)
};

// invalid: it ran, but a trial did not measure what the arm claims (Workload::invalid_reason).
enum class ArmStatus { ok, skipped, failed, invalid };

struct ArmResult {
  std::string name;  // "zero_grad/model:small_cnn/batch:32/arm:zero"
  std::string arm;   // "zero"
  bool baseline = false;
  Levels levels;
  ArmStatus status = ArmStatus::ok;
  std::string reason;  // why skipped or failed
  nlohmann::json info = nlohmann::json::object();
  std::vector<Trial> trials;
  // Summaries, derived from the trials (see summarize_arm).
  stats::Summary step_time_ms;                     // over every timed step of every trial
  stats::Summary throughput_samples_per_s;         // over trials (one per block)
  std::optional<stats::Summary> step_cpu_time_ms;  // CPU devices: over every timed step
  std::optional<std::int64_t> peak_memory_bytes;   // median over trials of the device's peak
  std::string memory_metric;                       // which MemoryUse field peak_memory_bytes is
  std::map<std::string, stats::Summary> metrics;   // each workload metric over trials
  std::optional<ArmProfile> profile;               // run --profile only
};

struct Comparison {
  std::string treatment;  // arm short names
  std::string baseline;
  std::string metric;  // "throughput_samples_per_s", "step_cpu_time_ms" or a memory figure
  stats::RatioEstimate estimate;
  stats::Verdict verdict = stats::Verdict::no_significant_difference;
  double cv = 0;                        // the larger between-block CV of the two arms' paired values
  bool noisy = false;                   // cv above noisy_cv_limit(settings)
  std::string recommendation;           // what to do about a noisy row, else ""
  StopReason stop = StopReason::fixed;  // why its blocks were enough (block_looks.h)
  std::size_t blocks_to_resolve = 0;    // unresolved: the blocks that would settle it, else 0
};

struct CaseResult {
  std::string name;
  Levels params;
  std::vector<ArmResult> arms;
  std::vector<Comparison> comparisons;
  double wall_s = 0;  // since 1.8: the case's wall time in this run (0: unknown, or taken from a resumed run)
  // Since 1.8, `run --time-budget`: why the case ran fewer blocks than its comparisons needed, or
  // none ("the case's share of the 15m budget, 52 s, ended after 3 blocks"); "" when it was not cut.
  std::string budget_cut;
};

// What the source articles behind a tip claim for it (docs/sources.md), shown next to what was
// measured: {"002", "\"moderately improves performance\", less memory"}.
struct SourceClaim {
  std::string sources;  // the sources' numbers: "002", "000-004"
  std::string claim;    // as the sources state it
  bool operator==(const SourceClaim&) const = default;
};

struct SuiteResult {
  std::string name;
  std::string description;
  std::string isolation;  // "in_process" or "fresh_process"
  std::vector<CaseResult> cases;
  std::vector<std::string> notes;           // the suite's conclusions across cases (Suite::notes), may be empty
  std::optional<SourceClaim> source_claim;  // nullopt: a tip beyond the sources (TF32, CUDA graphs)
  // The chart the suite declared (Suite::chart); nullopt in a result from before 1.4, where the
  // report infers it from the arms' levels as it did then. (`{}`: an aggregate initialiser that
  // stops before it needs no value for it and draws no warning.)
  std::optional<ChartKind> chart{};
};

struct GitState {
  std::string sha;  // "" outside a git checkout
  bool dirty = false;
};

struct RunContext {
  std::string tipbench_version;
  Fingerprint fingerprint;
  std::string fingerprint_slug;
  GitState git;
  std::vector<std::string> argv;
  std::string timestamp_utc;  // ISO 8601, "2026-11-21T09:14:03Z"
  std::string hostname;
  std::string device;  // "cpu", "cuda:0"
  MeasureSettings settings;
  std::vector<std::string> warnings;
  // Since 1.5: the user's model file the suites trained (`run --model-file`; docs/own-model.md):
  // its path, SHA-256, metadata and the TorchScript executor's settings. Null: the reference models.
  nlohmann::json model_file;
  // Since 1.6: the conditions of measurement over the run (run_conditions.h: other processes'
  // CPU share, steal, load average, CPU frequency and governor). Null: not recorded.
  nlohmann::json conditions;
};

struct Result {
  std::string schema_version = tipbench::schema_version();
  RunContext context;
  std::vector<SuiteResult> suites;
};

std::string_view to_string(ArmStatus status);

// Insertion-ordered JSON keeps the document in reading order (schema_version first).
nlohmann::ordered_json to_json_document(const Result& r);
nlohmann::ordered_json trial_to_json(const Trial& t);
Trial trial_from_json(const nlohmann::ordered_json& j);
// One case as the result document holds it (a partial run keeps its case in progress so).
// case_from_document throws nlohmann's exceptions on a bad document.
nlohmann::ordered_json case_document(const CaseResult& c);
CaseResult case_from_document(const nlohmann::ordered_json& j);
nlohmann::ordered_json profile_to_json(const ArmProfile& p);
ArmProfile profile_from_json(const nlohmann::ordered_json& j);

// Throws InputError naming the file: missing, unreadable, not JSON, a schema major version other
// than kSchemaMajor, or a document that does not match the schema.
Result read_result(const std::string& path);

// The throughput comparison's metric: the one every suite records.
inline constexpr const char* kThroughputMetric = "throughput_samples_per_s";

// Look-ups in a result: nullptr when absent. An arm by its label (ArmResult::arm, "ddp"), a
// comparison by its treatment arm and metric.
const SuiteResult* find_suite(const Result& result, std::string_view name);
const ArmResult* find_arm(const CaseResult& c, std::string_view arm);
const Comparison* find_comparison(const CaseResult& c, std::string_view treatment,
                                  std::string_view metric = kThroughputMetric);
Result parse_result(const nlohmann::ordered_json& document, const std::string& origin);
// The same for a file's bytes already read (`origin` names it in errors).
Result parse_result_text(const std::string& text, const std::string& origin);
// Temp file in the same directory, flushed, then renamed over `path`: a reader sees the old file
// or the new one, never a part. Creates missing parent directories. Throws std::runtime_error.
void write_result_atomically(const Result& result, const std::string& path);

}  // namespace tipbench
