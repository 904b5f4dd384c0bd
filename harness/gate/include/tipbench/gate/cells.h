// A cell is one measured quantity of one arm that can be compared across runs: suite, case, arm
// and metric, with one value per block. Example:
//   for (const auto& cell : tipbench::gate::extract_cells(result)) cell.key.label();
#pragma once

#include "tipbench/results/result.h"

#include <compare>
#include <map>
#include <string>
#include <vector>

namespace tipbench::gate {

// The metrics a cell can carry: throughput (higher is better), CPU time per step on CPU devices
// and the memory figures (lower is better).
inline constexpr const char* kThroughput = kThroughputMetric;  // result.h's
inline constexpr const char* kCpuTime = "step_cpu_time_ms";
bool is_known_metric(const std::string& metric);
bool higher_is_better(const std::string& metric);
std::vector<std::string> known_metrics();

struct CellKey {
  std::string suite;
  std::string case_name;      // "zero_grad/model:small_cnn/batch:32"
  std::string arm;            // short arm name, "zero"
  std::string metric;         // "throughput_samples_per_s", "peak_allocated_bytes", ...
  std::string label() const;  // "zero_grad/model:small_cnn/batch:32/arm:zero throughput"
  auto operator<=>(const CellKey&) const = default;
};

struct Cell {
  CellKey key;
  std::map<int, double> by_block;  // block index -> value (positive values only)
  std::vector<double> values() const;
};

// Every ok arm's throughput, CPU time per step and every memory figure its trials recorded. Arms that are skipped
// or failed yield no cell (see arm_problems).
std::vector<Cell> extract_cells(const Result& result);

// suite -> case -> arm status, for the gate to tell "failed here" from "not run".
struct ArmState {
  std::string suite;
  std::string case_name;
  std::string arm;
  ArmStatus status = ArmStatus::ok;
  std::string reason;
};
std::vector<ArmState> arm_states(const Result& result);

}  // namespace tipbench::gate
