// How far one run's level of a cell moves from run to run, beyond what its own blocks show: two
// runs minutes or days apart (a stored baseline and a run) differ by a boot, a clock, a memory
// layout that every block of one run shares. Measured from repeated runs of one fingerprint (the
// stored baselines) where at least kMinRunsForSpread of them hold the cell, never below a floor
// per device kind (GateConfig::between_run_floor). Example:
//   auto spread = tipbench::gate::between_run_spread(stored_runs, 0.005);
//   double sd = spread.for_cell(key);   // relative SD of one run's median, >= the floor
#pragma once

#include "tipbench/gate/cells.h"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace tipbench::gate {

inline constexpr std::size_t kMinRunsForSpread = 3;

struct MeasuredSpread {
  double sd = 0;  // sample SD of the log medians over the runs
  std::size_t runs = 0;
};

struct BetweenRunSpread {
  double floor = 0;  // relative SD assumed where nothing is measured, and the least ever used
  std::map<CellKey, MeasuredSpread> measured;

  double for_cell(const CellKey& key) const;
  // "0.50% (floor)" or "0.71% (7 stored runs)".
  std::string describe(const CellKey& key) const;
};

// Per cell, the SD of log(median) over the runs that hold it (at least kMinRunsForSpread).
BetweenRunSpread between_run_spread(const std::vector<Result>& runs, double floor);

}  // namespace tipbench::gate
