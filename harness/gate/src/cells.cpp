#include "tipbench/gate/cells.h"

#include <algorithm>
#include <array>
#include <optional>

namespace tipbench::gate {

namespace {

struct MemoryField {
  const char* name;
  std::optional<std::int64_t> MemoryUse::*field;
};

constexpr std::array<MemoryField, 3> kMemoryFields{{
    {"peak_allocated_bytes", &MemoryUse::peak_allocated_bytes},
    {"peak_reserved_bytes", &MemoryUse::peak_reserved_bytes},
    {"peak_rss_growth_bytes", &MemoryUse::peak_rss_growth_bytes},
}};

}  // namespace

std::vector<std::string> known_metrics() {
  std::vector<std::string> names{kThroughput, kCpuTime};
  for (const auto& m : kMemoryFields) names.emplace_back(m.name);
  return names;
}

bool is_known_metric(const std::string& metric) {
  const auto names = known_metrics();
  return std::find(names.begin(), names.end(), metric) != names.end();
}

bool higher_is_better(const std::string& metric) { return metric == kThroughput; }

std::string CellKey::label() const {
  const std::string what = metric == kThroughput ? "throughput" : metric == kCpuTime ? "cpu time" : metric;
  return case_name + "/arm:" + arm + " " + what;
}

std::vector<double> Cell::values() const {
  std::vector<double> out;
  out.reserve(by_block.size());
  for (const auto& [block, value] : by_block) out.push_back(value);
  return out;
}

std::vector<Cell> extract_cells(const Result& result) {
  std::vector<Cell> cells;
  for (const auto& suite : result.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok || arm.trials.empty()) continue;
        Cell throughput{{suite.name, c.name, arm.arm, kThroughput}, {}};
        Cell cpu_time{{suite.name, c.name, arm.arm, kCpuTime}, {}};
        std::array<Cell, kMemoryFields.size()> memory;
        for (std::size_t i = 0; i < kMemoryFields.size(); ++i) {
          memory[i].key = {suite.name, c.name, arm.arm, kMemoryFields[i].name};
        }
        for (const auto& t : arm.trials) {
          if (t.throughput_samples_per_s > 0) throughput.by_block[t.block] = t.throughput_samples_per_s;
          if (auto ms = cpu_time_per_step_ms(t); ms && *ms > 0) cpu_time.by_block[t.block] = *ms;
          for (std::size_t i = 0; i < kMemoryFields.size(); ++i) {
            const auto& value = t.memory.*(kMemoryFields[i].field);
            if (value && *value > 0) memory[i].by_block[t.block] = static_cast<double>(*value);
          }
        }
        if (!throughput.by_block.empty()) cells.push_back(std::move(throughput));
        if (!cpu_time.by_block.empty()) cells.push_back(std::move(cpu_time));
        for (auto& m : memory) {
          if (!m.by_block.empty()) cells.push_back(std::move(m));
        }
      }
    }
  }
  return cells;
}

std::vector<ArmState> arm_states(const Result& result) {
  std::vector<ArmState> out;
  for (const auto& suite : result.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) out.push_back({suite.name, c.name, arm.arm, arm.status, arm.reason});
    }
  }
  return out;
}

}  // namespace tipbench::gate
