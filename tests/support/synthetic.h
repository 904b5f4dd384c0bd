// Synthetic result documents for the gate and report tests: per-block throughputs drawn from a
// known distribution (median `throughput`, between-block CV `cv`), optionally slowed by a
// planted factor, so the tests know the right answer.
//   auto r = tipbench::testing::synthetic_run({.cpu_model = "Other CPU", .seed = 3});
// Its fingerprint_slug is the one its fingerprint gives (cpu-test-2c_torch2.11.0 by default), as
// every real run's is; `slug` overrides it only to make a file that contradicts itself.
#pragma once

#include "tipbench/environment/fingerprint.h"
#include "tipbench/results/result.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tipbench::testing {

struct SyntheticSpec {
  std::string slug = "";  // empty: fingerprint_slug(fingerprint)
  std::string cpu_model = "Test CPU";
  std::string libtorch_version = "2.11.0";
  std::vector<std::string> suites{"zero_grad"};
  int cases_per_suite = 1;
  std::string model = "";  // "" = m0, m1, ... per case; a reference model's name for a case a build can re-run
  int batch = 8;
  std::vector<std::string> arms{"base", "treat"};  // the first is the baseline arm
  std::string git_sha = "";
  int blocks = 10;
  double throughput = 1000;  // samples/s, median
  double cv = 0.01;          // between-block noise
  double factor = 1.0;       // planted change of every treatment AND baseline arm's throughput
  std::uint64_t seed = 0;
  std::string timestamp = "2026-11-21T09:00:00Z";
  bool memory = true;
  bool cpu_time = false;  // trials carry process CPU time per step (a CPU run's step_cpu_times_ms)
};

// A result's conditions of measurement (schema 1.6): other processes took `foreign_cpu` of the CPUs,
// the hypervisor `steal`, over `wall_s` seconds.
inline nlohmann::json measured_conditions(double foreign_cpu, double wall_s = 10, double steal = 0) {
  return {{"cpus", 2},      {"wall_s", wall_s},   {"foreign_cpu", foreign_cpu},
          {"steal", steal}, {"cpu_mhz", nullptr}, {"governor", nullptr}};
}

inline Result synthetic_run(const SyntheticSpec& spec) {
  Result r;
  r.context.tipbench_version = "0.1.0";
  r.context.timestamp_utc = spec.timestamp;
  r.context.hostname = "testhost";
  r.context.device = "cpu";
  r.context.fingerprint.cpu_model = spec.cpu_model;
  r.context.fingerprint.cpu_cores = 2;
  r.context.fingerprint.libtorch_version = spec.libtorch_version;
  r.context.fingerprint_slug = spec.slug.empty() ? fingerprint_slug(r.context.fingerprint) : spec.slug;
  r.context.argv = {"tipbench", "run", "--quick"};
  r.context.git.sha = spec.git_sha;
  r.context.settings.blocks = spec.blocks;
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> noise(0.0, spec.cv);
  for (const auto& name : spec.suites) {
    SuiteResult suite{name, "synthetic " + name, "in_process", {}, {}, {}};
    for (int ci = 0; ci < spec.cases_per_suite; ++ci) {
      CaseResult c;
      const std::string model = spec.model.empty() ? "m" + std::to_string(ci) : spec.model;
      c.name = fmt::format("{}/model:{}/batch:{}", name, model, spec.batch);
      c.params = {{"model", model}, {"batch", std::to_string(spec.batch)}};
      for (const std::string& arm : spec.arms) {
        ArmResult a;
        a.name = c.name + "/arm:" + arm;
        a.arm = arm;
        a.baseline = arm == spec.arms.front();
        a.levels = {{"knob", arm}};
        for (int b = 0; b < spec.blocks; ++b) {
          Trial t;
          t.block = b;
          t.samples_per_step = spec.batch;
          t.throughput_samples_per_s = spec.throughput * spec.factor * (1 + noise(rng));
          const double ms = 1000.0 * spec.batch / t.throughput_samples_per_s;
          t.step_times_ms = {ms, ms, ms};
          if (spec.cpu_time) t.step_cpu_times_ms = {2 * ms, 2 * ms, 2 * ms};  // two busy threads
          if (spec.memory) t.memory.peak_rss_growth_bytes = 1 << 20;
          a.trials.push_back(t);
        }
        c.arms.push_back(std::move(a));
      }
      summarize_case(c, r.context.settings);
      suite.cases.push_back(std::move(c));
    }
    r.suites.push_back(std::move(suite));
  }
  return r;
}

}  // namespace tipbench::testing
