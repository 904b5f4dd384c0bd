// A suite is the A/B experiment for one tip. It declares cases (fixed parameters such as model
// and batch), each with arms (arms[0] is the baseline: the PyTorch default), and builds a
// Workload per arm. It knows nothing about timing: warm-up, sync, blocks, statistics and output
// belong to the harness. Example (suites/zero_grad.cpp):
//   class ZeroGrad final : public tipbench::Suite { ... };
//   TIPBENCH_REGISTER_SUITE(ZeroGrad);
#pragma once

#include "tipbench/results/chart_kind.h"
#include "tipbench/results/levels.h"
#include "tipbench/results/result.h"
#include "tipbench/results/suite_options.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tipbench {

struct ArmSpec {
  std::string name;  // short: "none", "zero", "on"
  Levels levels;     // the factor levels this arm sets, e.g. {{"set_to_none", "true"}}
};

struct CaseSpec {
  Levels params;              // e.g. {{"model", "resnet50"}, {"batch", "64"}}
  std::vector<ArmSpec> arms;  // arms[0] is the baseline
};

// The run-wide choices a suite builds its cases from.
struct SuiteContext {
  c10::Device device = c10::Device(c10::kCPU);
  std::vector<std::string> models;  // empty: the suite picks its default for the device
  std::int64_t batch_size = 0;      // 0: the default for model and device
  std::uint64_t seed = 0;
  bool quick = false;
  // The values of the options suites declare (Suite::options), by name; read them through the
  // declaration (SuiteOption::text/flag/number), which supplies the default.
  SuiteOptionValues options;
  // What every process of the run does before it builds a workload, as the CLI did in its own (a
  // model file to load and register: docs/own-model.md); a fresh-process trial's child repeats it.
  // Opaque to the harness; null: nothing.
  nlohmann::json process_setup;
};

// Which trial a workload is prepared for: its block (0, 1, ...; arms of one block share it, so a
// suite that varies something per block, e.g. a training seed, keeps the arms paired) and its
// position in the block's shuffled order. The same in every process of the trial (a fresh
// process, every rank of a distributed one).
struct TrialInfo {
  int block = 0;
  int position = 0;
};

// The timed steps of a workload whose steps run in another process, timed there by the harness's
// own method (CUDA events on the current stream after one untimed step; the monotonic clock and
// the process's CPU time on a CPU), with that process's memory (MemoryUse's meanings).
struct StepsTimedElsewhere {
  std::vector<double> step_times_ms;
  std::vector<double> step_cpu_times_ms;  // CPU only
  MemoryUse memory;
};

// One prepared arm: everything staged (model built, inputs on the device) before timing.
class Workload {
 public:
  virtual ~Workload() = default;
  // One measured unit, e.g. a training step. May be asynchronous on a GPU.
  virtual void step() = 0;
  virtual std::int64_t samples_per_step() const = 0;
  // Called once between the untimed warm-up and the timed steps (e.g. to switch from a warm-up
  // input shape to the measured shape schedule).
  virtual void begin_measurement() {}
  // A workload whose step is not a steady state (an epoch of a run that restarts at
  // begin_measurement) warms up with exactly this many steps instead of waiting for step times
  // to settle; 0: the harness's warm-up (MeasureSettings).
  virtual int fixed_warmup_steps() const { return 0; }
  // A workload whose timed inputs follow a schedule of this many steps (inputs that grow, then
  // start again) times whole periods of it, at least two: the first, where a cold process meets
  // each shape, and a later one. 1: no schedule (the step count is the settings' alone).
  virtual int timed_step_period() const { return 1; }
  // Static facts recorded with the arm (parameter count, input shape, ...).
  virtual nlohmann::json info() const { return nlohmann::json::object(); }
  // What the workload measured itself over the timed steps (since begin_measurement), units in
  // the names: {"data_wait_fraction", 0.31}, {"h2d_copy_ms", 1.9}. Read once per trial, after the
  // timed steps have finished on the device.
  virtual std::map<std::string, double> metrics() const { return {}; }
  // Whether the runner may keep this workload for the arm's next trial of the case instead of
  // building it again (its model, optimizer state and warm caches carry over; begin_measurement
  // is called again). Only for a workload that touches nothing process-wide while it lives (no
  // global knob, no background threads) and whose next trial does not depend on its TrialInfo.
  virtual bool keep_between_trials() const { return false; }
  // A kept workload between two of its trials, while the other arms run theirs: set_aside() when
  // its trial ends, take_back() before its next. One that owns a process-wide knob puts the knob
  // back and sets it again there (suites/common/scoped_workload.h).
  virtual void set_aside() {}
  virtual void take_back() {}
  // Whether the timed steps replay a CUDA graph: its activations and workspace sit in a private
  // pool that the caching allocator hands out once, at capture, and a replay allocates nothing,
  // so the allocator's allocated bytes leave them out (and a capture's transient peak is in one
  // trial and not the next). Such a trial records its reserved peak only, which holds the pool,
  // and no allocated peak to compare (c10/cuda/CUDACachingAllocator.cpp, private pools;
  // torch/_inductor/cudagraph_trees.py).
  virtual bool memory_in_private_pool() const { return false; }
  // A workload whose steps run in another process (the Python worker: torch.compile exists only
  // there) returns true: the harness then warms it up through step() as any other, but has it
  // time its steps where they run (time_steps_elsewhere), since this process's clock and CUDA
  // events cannot see them; `--profile` does not reach that process.
  virtual bool steps_run_elsewhere() const { return false; }
  virtual StepsTimedElsewhere time_steps_elsewhere(int steps) {
    throw std::logic_error("time_steps_elsewhere of a workload whose steps run here");
  }
  // Why the timed steps did not measure what the arm claims (e.g. a loader that skipped more than
  // 1% of its files as corrupt: the throughput counts work not done); nullopt when they did. Read
  // once per trial, after metrics(). An invalid trial makes its arm `invalid`: kept, not compared.
  virtual std::optional<std::string> invalid_reason() const { return std::nullopt; }
};

// Thrown while preparing an arm that, after all, cannot run here, for a reason only the trial's
// own process can see (which allocator its LD_PRELOAD really gave it): the runner then records
// the arm as skipped with the reason, not as failed. Crosses the fresh-process boundary.
struct ArmUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Isolation {
  in_process,     // arms switch in place: interleaved trials share one process
  fresh_process,  // a sticky, process-wide knob (autotuner cache): every trial in a new process
};

class Suite {
 public:
  virtual ~Suite() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // What the source articles claim for the tip (docs/sources.md is the key to their codes),
  // recorded with the result and shown by the reports beside the measured ratios; nullopt for a
  // tip beyond the sources.
  virtual std::optional<SourceClaim> source_claim() const { return std::nullopt; }
  // The report's chart for the suite's cases beside the common ones (chart_kind.h says what
  // encoding of the arms each kind reads); recorded in the result.
  virtual ChartKind chart() const { return ChartKind::none; }
  // Models the suite can run; empty means any.
  virtual std::vector<std::string> supported_models() const { return {}; }
  // The suite's own flags (tipbench run --NAME): declared here, added and documented by the CLI.
  virtual std::vector<SuiteOption> options() const { return {}; }
  virtual std::vector<CaseSpec> cases(const SuiteContext& context) const = 0;
  // Why an arm cannot run here (cudnn on a CPU, one GPU for DataParallel); nullopt when it can.
  virtual std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                                 const ArmSpec& arm) const {
    return std::nullopt;
  }
  virtual Isolation isolation(const SuiteContext& context) const { return Isolation::in_process; }
  // Environment variables a fresh-process trial of the arm starts with, on top of the parent's
  // (LD_PRELOAD of another allocator, CUBLAS_WORKSPACE_CONFIG): for what a process reads once,
  // when it starts. Only fresh_process suites may return any (the runner refuses otherwise).
  virtual std::map<std::string, std::string> trial_environment(const SuiteContext& context, const CaseSpec& c,
                                                               const ArmSpec& arm) const {
    return {};
  }
  // Called once per run in the parent process, before any trial of the run: stages what every
  // trial shares (e.g. makes an on-disk dataset) and checks run-wide inputs. Throws InputError
  // for bad input: the run then stops before measuring anything (exit 2).
  virtual void prepare_run(const SuiteContext& context) const {}
  // Called in the parent process just before a case's first block in this command (never for a
  // case a resumed run finished before), when the previous case's kept arms are released: for
  // what must see a device that holds nothing else (a largest-batch search,
  // suites/common/largest_batch.h). `so_far` is the case as a resumed run kept it (its arms'
  // info), else empty of trials. Time spent here is in the run's time budget. A throw fails the
  // case's arms that would have run, with the reason; the other cases run.
  virtual void prepare_case(const SuiteContext& context, const CaseSpec& c, const CaseResult& so_far) const {}
  // Conclusions across the summarised cases that the per-arm rows do not show (e.g. whether the
  // data-loading ceiling is below the model's consumption); stored as the suite's `notes` and
  // printed after its table.
  virtual std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const {
    return {};
  }
  virtual std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                            const TrialInfo& trial) const = 0;
};

// "zero_grad/model:resnet50/batch:64" and ".../arm:none".
std::string case_name(const std::string& suite, const CaseSpec& c);
std::string arm_name(const std::string& suite, const CaseSpec& c, const ArmSpec& arm);

}  // namespace tipbench
