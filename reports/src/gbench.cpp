#include "tipbench/reports/gbench.h"

#include "tipbench/statistics/stats.h"

#include <numeric>

namespace tipbench::reports {

namespace {

using ojson = nlohmann::ordered_json;

double mean_step_ms(const Trial& t) {
  if (t.step_times_ms.empty()) return 0;
  return std::accumulate(t.step_times_ms.begin(), t.step_times_ms.end(), 0.0) /
         static_cast<double>(t.step_times_ms.size());
}

ojson benchmark(const std::string& name, const std::string& run_type, std::size_t reps, std::size_t index, double ms,
                std::int64_t iterations, double items_per_second) {
  ojson j = {{"name", name},
             {"family_index", 0},
             {"per_family_instance_index", 0},
             {"run_name", name},
             {"run_type", run_type},
             {"repetitions", reps},
             {"repetition_index", index},
             {"threads", 1},
             {"iterations", iterations},
             {"real_time", ms},
             {"cpu_time", ms},
             {"time_unit", "ms"},
             {"items_per_second", items_per_second}};
  if (run_type == "aggregate") {
    j.erase("repetition_index");
    j["aggregate_name"] = "median";
    j["aggregate_unit"] = "time";
    j["name"] = name + "_median";
  }
  return j;
}

}  // namespace

ojson to_gbench_json(const Result& result) {
  const auto& ctx = result.context;
  ojson skipped = ojson::array();
  ojson benchmarks = ojson::array();
  int family = 0;
  for (const auto& suite : result.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok || arm.trials.empty()) {
          skipped.push_back(arm.name);
          continue;
        }
        std::vector<double> ms;
        for (std::size_t i = 0; i < arm.trials.size(); ++i) {
          const auto& t = arm.trials[i];
          ms.push_back(mean_step_ms(t));
          auto b = benchmark(arm.name, "iteration", arm.trials.size(), i, ms.back(),
                             static_cast<std::int64_t>(t.step_times_ms.size()), t.throughput_samples_per_s);
          b["family_index"] = family;
          benchmarks.push_back(std::move(b));
        }
        auto agg = benchmark(arm.name, "aggregate", arm.trials.size(), 0, stats::median(ms),
                             static_cast<std::int64_t>(arm.trials.size()), arm.throughput_samples_per_s.median);
        agg["family_index"] = family;
        benchmarks.push_back(std::move(agg));
        ++family;
      }
    }
  }
  ojson context = {{"date", ctx.timestamp_utc},
                   {"host_name", ctx.hostname},
                   {"executable", ctx.argv.empty() ? std::string("tipbench") : ctx.argv.front()},
                   {"num_cpus", ctx.fingerprint.cpu_cores},
                   {"mhz_per_cpu", 0},
                   {"cpu_scaling_enabled", false},
                   {"caches", ojson::array()},
                   {"library_build_type", ctx.fingerprint.build_type == "Debug" ? "debug" : "release"},
                   {"tipbench_fingerprint_slug", ctx.fingerprint_slug},
                   {"tipbench_device", ctx.device},
                   {"tipbench_inject_slowdown_pct", ctx.settings.inject_slowdown_pct},
                   {"tipbench_not_run", skipped}};
  return {{"context", context}, {"benchmarks", benchmarks}};
}

}  // namespace tipbench::reports
