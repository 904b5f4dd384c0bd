// Conditions of measurement (tipbench/environment/run_conditions.h, conditions_probe.h) and what the gate does with
// them: a probe sees other processes' CPU use and not its own; two unpaired runs whose conditions differ beyond the
// bound never FAIL the gate unless a re-run under the baseline's conditions confirms it.
#include "tipbench/gate/decision.h"
#include "tipbench/gate/gate_config.h"
#include "tipbench/environment/conditions_probe.h"

#include "synthetic.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace {

using tipbench::Result;
using tipbench::testing::synthetic_run;
using tipbench::testing::SyntheticSpec;
namespace g = tipbench::gate;

nlohmann::json conditions(double foreign_cpu, double wall_s = 10, double steal = 0) {
  return tipbench::testing::measured_conditions(foreign_cpu, wall_s, steal);
}

Result with_conditions(Result r, const nlohmann::json& c) {
  r.context.conditions = c;
  return r;
}

// A re-measurement of `again` compared with `base`, marked as measured under other conditions
// than the base's when `unequal` says why.
g::Remeasure remeasure(const Result& base, SyntheticSpec again, std::string unequal) {
  return [base, again, unequal](const std::vector<g::CellKey>& keys) {
    std::map<g::CellKey, g::CellComparison> out;
    for (auto c : g::compare_runs(base, synthetic_run(again), {.seed = 2}).cells) {
      if (std::find(keys.begin(), keys.end(), c.key) == keys.end()) continue;
      c.unequal_conditions = unequal;
      out.emplace(c.key, c);
    }
    return out;
  };
}

bool mentions(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const auto& l) { return l.find(part) != std::string::npos; });
}

TEST(Conditions, DifferenceNamesWhatDiffersBeyondTheBound) {
  const tipbench::ConditionsBound bound;  // 20 points of CPU share, 5 of steal
  EXPECT_EQ(tipbench::conditions_difference(conditions(0.02), conditions(0.15), bound), "");
  const auto why = tipbench::conditions_difference(conditions(0.02), conditions(0.61), bound);
  EXPECT_NE(why.find("2% of the CPUs busy during the reference run, 61% during the compared one"), std::string::npos)
      << why;
  EXPECT_NE(tipbench::conditions_difference(conditions(0, 10, 0), conditions(0, 10, 0.2), bound)
                .find("20% from the compared one"),
            std::string::npos);
  // Not recorded on a side (a result older than schema 1.6): judged as before.
  EXPECT_EQ(tipbench::conditions_difference(nullptr, conditions(0.9), bound), "");
  EXPECT_EQ(tipbench::conditions_difference(conditions(0.02), conditions(0.61), {.foreign_cpu = 0.7}), "");
}

TEST(Conditions, ALoadedRunSaysSoInItsSummary) {
  EXPECT_EQ(tipbench::conditions_warning(conditions(0.05)), "");
  EXPECT_EQ(tipbench::conditions_warning(nullptr), "");
  const auto loaded = tipbench::conditions_warning(conditions(0.5));
  EXPECT_NE(loaded.find("other processes kept 50% of this run's CPUs busy"), std::string::npos) << loaded;
  EXPECT_NE(tipbench::conditions_warning(conditions(0, 10, 0.1)).find("stole 10%"), std::string::npos);
}

TEST(Conditions, TheBoundIsDeclaredInTheGateConfig) {
  const auto config = g::parse_gate_config({{"conditions", {{"foreign_cpu_pct", 35}, {"steal_pct", 10}}}}, "test");
  EXPECT_DOUBLE_EQ(config.conditions.foreign_cpu, 0.35);
  EXPECT_DOUBLE_EQ(config.conditions.steal, 0.10);
  EXPECT_DOUBLE_EQ(g::parse_gate_config(g::gate_config_to_json(config), "again").conditions.foreign_cpu, 0.35);
  EXPECT_THROW((void)g::parse_gate_config({{"conditions", {{"load", 1}}}}, "test"), tipbench::InputError);
  EXPECT_THROW((void)g::parse_gate_config({{"conditions", {{"steal_pct", 200}}}}, "test"), tipbench::InputError);
}

TEST(Conditions, BlocksCombineWeightedByTheirWallTime) {
  const auto combined = tipbench::combine_conditions({conditions(0.0, 30), conditions(0.8, 10)});
  EXPECT_DOUBLE_EQ(combined.at("foreign_cpu").get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(combined.at("wall_s").get<double>(), 40);
  EXPECT_TRUE(tipbench::combine_conditions({nullptr, nullptr}).is_null());
}

// A CUDA run's GPU conditions (NVML): carried through JSON, combined over blocks, compared.
nlohmann::json gpu_conditions(double thermal, double power_capped, int others, double wall_s = 10) {
  tipbench::RunConditions c = tipbench::conditions_from_json(conditions(0.0, wall_s));
  c.gpus.push_back({.gpu = "GPU 0 (Test GPU)",
                    .sm_clock_mhz = 1980 * (1 - power_capped / 4),
                    .temperature_c = 40,
                    .power_w = 350.5,
                    .thermal_share = thermal,
                    .power_capped_share = power_capped,
                    .other_processes = others,
                    .throttle_reasons = power_capped > 0 ? std::vector<std::string>{"software power cap"}
                                                         : std::vector<std::string>{}});
  return tipbench::conditions_to_json(c);
}

TEST(Conditions, GpuConditionsRoundTripCombineAndDiffer) {
  const auto j = gpu_conditions(0.25, 0.5, 0);
  const auto back = tipbench::conditions_from_json(j);
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].gpu, "GPU 0 (Test GPU)");
  EXPECT_DOUBLE_EQ(*back.gpus[0].thermal_share, 0.25);
  EXPECT_DOUBLE_EQ(*back.gpus[0].power_capped_share, 0.5);
  EXPECT_DOUBLE_EQ(*back.gpus[0].power_w, 350.5);
  EXPECT_EQ(back.gpus[0].throttle_reasons, std::vector<std::string>{"software power cap"});
  EXPECT_FALSE(tipbench::conditions_to_json(tipbench::conditions_from_json(conditions(0.1))).contains("gpus"));

  // Blocks: shares weighted by wall time, the most other processes, every reason.
  const auto combined = tipbench::conditions_from_json(
      tipbench::combine_conditions({gpu_conditions(0.0, 0.0, 0, 30), gpu_conditions(0.4, 0.8, 1, 10)}));
  ASSERT_EQ(combined.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(*combined.gpus[0].thermal_share, 0.1);
  EXPECT_DOUBLE_EQ(*combined.gpus[0].power_capped_share, 0.2);
  EXPECT_EQ(*combined.gpus[0].other_processes, 1);
  EXPECT_EQ(combined.gpus[0].throttle_reasons.size(), 1u);

  const tipbench::ConditionsBound bound;  // 10 points of thermal share
  EXPECT_EQ(tipbench::conditions_difference(gpu_conditions(0.0, 0.0, 1), gpu_conditions(0.05, 0.0, 1), bound), "");
  const auto hot = tipbench::conditions_difference(gpu_conditions(0.0, 0.0, 0), gpu_conditions(0.3, 0.0, 0), bound);
  EXPECT_NE(hot.find("held down by heat for 0% of the reference run, 30% of the compared one"), std::string::npos)
      << hot;
  const auto shared = tipbench::conditions_difference(gpu_conditions(0.0, 0.0, 0), gpu_conditions(0.0, 0.0, 2), bound);
  EXPECT_NE(shared.find("0 other compute process(es) shared GPU 0 (Test GPU) during the reference run, 2"),
            std::string::npos)
      << shared;
  // The power cap (and the lower SM clock it brings) follows the workload: never judged, or a build
  // that draws more power would hide its own regression behind INCONCLUSIVE.
  EXPECT_EQ(tipbench::conditions_difference(gpu_conditions(0.0, 0.0, 0), gpu_conditions(0.0, 0.9, 0), bound), "");
  EXPECT_EQ(tipbench::conditions_warning(gpu_conditions(0.0, 0.9, 0)), "");

  // A thermally throttled run says so (and the history flags it); one with a neighbour does not.
  EXPECT_NE(
      tipbench::conditions_warning(gpu_conditions(0.3, 0.0, 0)).find("held down by heat (thermal slowdown) for 30%"),
      std::string::npos);
  EXPECT_EQ(tipbench::conditions_warning(gpu_conditions(0.0, 0.0, 1)), "");

  const auto config = g::parse_gate_config({{"conditions", {{"gpu_thermal_pct", 20}}}}, "t");
  EXPECT_DOUBLE_EQ(config.conditions.gpu_thermal, 0.20);
  EXPECT_DOUBLE_EQ(g::parse_gate_config(g::gate_config_to_json(config), "again").conditions.gpu_thermal, 0.20);
  EXPECT_THROW((void)g::parse_gate_config({{"conditions", {{"gpu_sm_clock_pct", 5}}}}, "t"), tipbench::InputError);
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Processes this one did not start, spinning on its CPUs, are foreign; the probe's own spinning
// is not. (Children count as this process's only once waited for, as the kernel accounts them.)
TEST(Conditions, ProbeSeesOtherProcessesCpuUseAndNotItsOwn) {
  const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  const tipbench::ConditionsProbe probe;
  std::vector<pid_t> spinners;
  for (long i = 0; i < cpus; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      for (volatile unsigned long x = 0;; x = x + 1) {
      }
    }
    spinners.push_back(pid);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto loaded = probe.finish();
  for (pid_t pid : spinners) kill(pid, SIGKILL);
  for (pid_t pid : spinners) waitpid(pid, nullptr, 0);
  ASSERT_TRUE(loaded.foreign_cpu.has_value()) << "/proc/stat unreadable";
  EXPECT_GT(*loaded.foreign_cpu, 0.6) << "one spinner per CPU for 1.5 s while this process slept";
  EXPECT_GE(loaded.cpus, 1);
  EXPECT_GT(loaded.wall_s, 1.0);

  // Then this process spins, pinned to one CPU, which is all the probe then counts. Were its own
  // time counted as foreign, the share would read 1; counted as its own, at most 1 minus the share
  // this process got. That share is measured, not assumed: other processes (ctest -j, a busy
  // runner) may share the CPU, and the bound holds whatever they take.
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  int one = 0;
  while (one + 1 < CPU_SETSIZE && !CPU_ISSET(one, &all)) ++one;
  cpu_set_t pinned;
  CPU_ZERO(&pinned);
  CPU_SET(one, &pinned);
  ASSERT_EQ(sched_setaffinity(0, sizeof(pinned), &pinned), 0);
  const tipbench::ConditionsProbe own;
  const double cpu_start = process_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (volatile unsigned long x = 0; std::chrono::steady_clock::now() < start + std::chrono::milliseconds(1500);
       x = x + 1) {
  }
  const auto busy_self = own.finish();
  const double own_share = (process_cpu_seconds() - cpu_start) /
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sched_setaffinity(0, sizeof(all), &all);
  EXPECT_EQ(busy_self.cpus, 1);
  // /proc/stat counts in 10 ms ticks: 150 over 1.5 s on one CPU, so a share under 10% is not told
  // apart from the ticks' rounding.
  if (own_share < 0.1) {
    GTEST_SKIP() << "this process got " << own_share * 100
                 << "% of its CPU while spinning (other processes took the rest): too little to tell its own time "
                    "from theirs";
  }
  EXPECT_LE(*busy_self.foreign_cpu, 1.0 - own_share / 2)
      << "its own spinning counted as foreign (it had " << own_share * 100 << "% of the CPU)";
}

TEST(Conditions, UnequalConditionsMakeASlowerRunInconclusiveNeverFail) {
  const auto base = with_conditions(synthetic_run({.cv = 0.01, .seed = 1}), conditions(0.02));
  const auto current = with_conditions(synthetic_run({.cv = 0.01, .factor = 0.8, .seed = 2}), conditions(0.65));
  auto report = g::evaluate_gate(base, current, {}, {.paired = false, .seed = 1});
  EXPECT_FALSE(report.unequal_conditions.empty());
  g::confirm_candidates(report, remeasure(base, {.cv = 0.01, .factor = 0.8, .seed = 3}, "still loaded"), {});
  EXPECT_EQ(report.outcome, g::Outcome::inconclusive);
  EXPECT_EQ(report.exit_code(), 3);
  EXPECT_TRUE(mentions(report.problems, "measured under different conditions: other processes kept 2%"));
  EXPECT_NE(report.checks.front().detail.find("under other conditions than the baseline's"), std::string::npos)
      << report.checks.front().detail;

  auto no_rerun = g::evaluate_gate(base, current, {}, {.paired = false, .seed = 1});
  g::confirm_candidates(no_rerun, g::Remeasure{}, {});
  EXPECT_EQ(no_rerun.exit_code(), 3);
}

TEST(Conditions, AReRunUnderTheBaselinesConditionsStillConfirmsARegression) {
  const auto base = with_conditions(synthetic_run({.cv = 0.01, .seed = 1}), conditions(0.02));
  const auto current = with_conditions(synthetic_run({.cv = 0.01, .factor = 0.8, .seed = 2}), conditions(0.65));
  auto report = g::evaluate_gate(base, current, {}, {.paired = false, .seed = 1});
  g::confirm_candidates(report, remeasure(base, {.cv = 0.01, .factor = 0.8, .seed = 3}, ""), {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_NE(report.checks.front().detail.find("confirmed on re-run"), std::string::npos);
}

// Interleaved blocks share their conditions: a paired gate never judges them.
TEST(Conditions, APairedGateIgnoresThem) {
  const auto base = with_conditions(synthetic_run({.cv = 0.01, .seed = 1}), conditions(0.02));
  const auto current = with_conditions(synthetic_run({.cv = 0.01, .seed = 2}), conditions(0.9));
  const auto report = g::evaluate_gate(base, current, {}, {.paired = true, .seed = 1});
  EXPECT_TRUE(report.unequal_conditions.empty());
  EXPECT_FALSE(mentions(report.problems, "different conditions"));
}

}  // namespace
