// The gate's interleaved session: two binaries run alternately in child runs
// (tipbench/processes/child_runs.h), one block at a time (`run --blocks 1`, order shuffled per block), so
// block i of head pairs with block i of base; re-measurements run only the flagged cases. Used by
// `gate --base-binary/--head-binary`, its confirmation and history's confirm and bisect.
//   const SessionResult s = run_interleaved({.base_binary = a, .head_binary = b, .blocks = 8, ...}, "session");
#pragma once

#include "tipbench/processes/child_runs.h"
#include "tipbench/results/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tipbench::gate {

struct SessionPlan {
  std::string base_binary;
  std::string head_binary;
  // `run` arguments per side (suites, device, --quick, ...; the head may add the calibration knob),
  // without --blocks/--seed/--out, which the session sets.
  std::vector<std::string> base_args;
  std::vector<std::string> head_args;
  int blocks = 8;
  std::uint64_t seed = 0;
  std::string work_dir;  // per-block results and logs
};

struct SessionResult {
  Result base;
  Result head;
};

// Throws ChildRunError (or ChildInterrupted).
SessionResult run_interleaved(const SessionPlan& plan, const std::string& tag);

}  // namespace tipbench::gate
