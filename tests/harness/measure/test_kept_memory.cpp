// The CUDA memory accounting of kept arms (memory_probe.h, runner.cpp) through its seam, on a
// simulated caching allocator (simulated_allocator.h) that a CPU runs: the real runner, trials
// and probe, with the allocator's statistics as values. What an arm holds between its trials is
// taken out of the other arms' peaks; what the process allocates once for everyone (the cuBLAS
// workspace at its first matmul) is in every arm's peak alike, whichever arm ran first; a CUDA
// graph's private pool, which emptying the cache never frees, is the graph arm's own; the timed
// steps' peak is told from the whole trial's.
#include "tipbench/measure/runner.h"

#include "simulated_allocator.h"
#include "tiny_run.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

namespace {

using tipbench::ArmResult;
using tipbench::ArmSpec;
using tipbench::CaseSpec;
using tipbench::SuiteContext;
using tipbench::TrialInfo;
using tipbench::testing::SimulatedCachingAllocator;

constexpr std::int64_t kMiB = SimulatedCachingAllocator::kMiB;
constexpr std::int64_t kWorkspace = SimulatedCachingAllocator::kWorkspaceBytes;
// Above 10 MiB, so each has a segment of its own and reserved bytes add up exactly.
constexpr std::int64_t kModel = 12 * kMiB;
constexpr std::int64_t kActivations = 24 * kMiB;
constexpr std::int64_t kGraphPool = 16 * kMiB;
constexpr std::int64_t kAutotune = 64 * kMiB;

// An arm's workload on the simulated device. "eager": its model is allocated when built, each step
// runs a matmul and allocates and frees its activations. "graph": its step was captured, so the
// activations live in a private pool allocated when built, and a replay allocates nothing.
// "autotune": its first step also allocates a large workspace for a while.
class SimulatedWorkload final : public tipbench::Workload {
 public:
  SimulatedWorkload(SimulatedCachingAllocator& device, std::string arm) : device_(device), arm_(std::move(arm)) {
    model_ = device_.malloc(kModel);
    if (arm_ == "graph") pool_ = device_.malloc(kGraphPool, /*private_pool=*/true);
  }
  ~SimulatedWorkload() override {
    device_.free(model_);
    if (pool_ >= 0) {
      device_.free(pool_);
      device_.release_private_pools();
    }
  }
  SimulatedWorkload(const SimulatedWorkload&) = delete;
  SimulatedWorkload& operator=(const SimulatedWorkload&) = delete;

  void step() override {
    device_.first_matmul();
    if (arm_ == "graph") return;
    if (arm_ == "autotune" && steps_++ == 0) device_.free(device_.malloc(kAutotune));
    device_.free(device_.malloc(arm_ == "autotune" ? kMiB : kActivations));
  }
  std::int64_t samples_per_step() const override { return 4; }
  bool keep_between_trials() const override { return true; }
  bool memory_in_private_pool() const override { return arm_ == "graph"; }

 private:
  SimulatedCachingAllocator& device_;
  std::string arm_;
  std::int64_t model_ = -1;
  std::int64_t pool_ = -1;
  int steps_ = 0;
};

class SimulatedSuite final : public tipbench::Suite {
 public:
  SimulatedSuite(SimulatedCachingAllocator& device, std::vector<std::string> arms)
      : device_(device), arms_(std::move(arms)) {}
  std::string name() const override { return "simulated"; }
  std::string description() const override { return "arms on a simulated caching allocator"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override {
    CaseSpec c{{{"model", "m"}}, {}};
    for (const auto& a : arms_) c.arms.push_back({a, {{"arm", a}}});
    return {c};
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec&, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    return std::make_unique<SimulatedWorkload>(device_, arm.name);
  }

 private:
  SimulatedCachingAllocator& device_;
  std::vector<std::string> arms_;
};

std::vector<tipbench::SuiteResult> run(const tipbench::Suite& suite, int blocks) {
  auto plan = tipbench::testing::tiny_run_plan(suite, blocks);
  plan.settings.min_blocks = blocks;
  return tipbench::testing::run_quietly(plan);
}

const ArmResult& arm_named(const tipbench::SuiteResult& r, const std::string& name) {
  for (const auto& a : r.cases.at(0).arms) {
    if (a.arm == name) return a;
  }
  throw std::runtime_error("no arm " + name);
}

// Two identical arms: every trial of both reads the same peak, the workspace included, whichever
// arm made the process's first matmul. Before the runner made the workspace up front, it landed
// in the first arm's kept memory: that arm read 32 MiB more than the other in every trial.
TEST(KeptArmMemory, AWorkspaceMadeAtTheFirstMatmulIsInEveryArmsPeakAlike) {
  SimulatedCachingAllocator device;
  const tipbench::testing::UseSimulatedAllocator use(device);
  const SimulatedSuite suite(device, {"a", "b"});
  const auto results = run(suite, 4);
  for (const char* name : {"a", "b"}) {
    const auto& arm = arm_named(results.at(0), name);
    ASSERT_EQ(arm.trials.size(), 4u) << arm.reason;
    for (const auto& t : arm.trials) {
      EXPECT_EQ(t.memory.peak_allocated_bytes, kWorkspace + kModel + kActivations)
          << name << " block " << t.block << (t.reused_workload ? " (kept)" : " (built)");
      EXPECT_EQ(t.memory.peak_reserved_bytes, kWorkspace + kModel + kActivations) << name << " block " << t.block;
    }
  }
}

// A graph's private pool stays reserved while the graph lives (emptying the cache never frees
// it): it is the graph arm's own memory in every trial, and in none of the eager arm's; the graph
// arm records its reserved peak only.
TEST(KeptArmMemory, AGraphsPrivatePoolIsTheGraphArmsOwnInEveryBlockOrder) {
  SimulatedCachingAllocator device;
  const tipbench::testing::UseSimulatedAllocator use(device);
  const SimulatedSuite suite(device, {"eager", "graph"});
  const auto results = run(suite, 6);
  for (const auto& t : arm_named(results.at(0), "eager").trials) {
    EXPECT_EQ(t.memory.peak_allocated_bytes, kWorkspace + kModel + kActivations) << "block " << t.block;
    EXPECT_EQ(t.memory.peak_reserved_bytes, kWorkspace + kModel + kActivations) << "block " << t.block;
  }
  const auto& graph = arm_named(results.at(0), "graph");
  EXPECT_EQ(graph.info.value("memory_in_private_pool", false), true);
  for (const auto& t : graph.trials) {
    EXPECT_EQ(t.memory.peak_reserved_bytes, kWorkspace + kModel + kGraphPool) << "block " << t.block;
    // A replay allocates nothing: its allocated bytes would leave the pool's activations out
    // (Workload::memory_in_private_pool), so there is no allocated peak to compare.
    EXPECT_FALSE(t.memory.peak_allocated_bytes.has_value()) << "block " << t.block;
    EXPECT_FALSE(t.memory.timed_peak_allocated_bytes.has_value()) << "block " << t.block;
  }
}

// The whole trial's peak holds the first step's autotuning workspace; the timed steps' own peak
// (peaks reset between the warm-up and the first timed step) does not.
TEST(KeptArmMemory, TheTimedStepsPeakIsToldFromTheWholeTrials) {
  SimulatedCachingAllocator device;
  const tipbench::testing::UseSimulatedAllocator use(device);
  const SimulatedSuite suite(device, {"autotune"});
  const auto results = run(suite, 2);
  const auto& first = arm_named(results.at(0), "autotune").trials.at(0);
  EXPECT_EQ(first.memory.peak_allocated_bytes, kWorkspace + kModel + kAutotune);
  EXPECT_EQ(first.memory.timed_peak_allocated_bytes, kWorkspace + kModel + kMiB);
  EXPECT_GT(device.empties(), 0) << "the probe empties the cache before each trial";
}

}  // namespace
