// Internal to the CLI: the gate's interleaved session. It runs two binaries alternately, one
// block at a time (`run --blocks 1`, order shuffled per block), so block i of head pairs with
// block i of base; re-measurements run only the flagged cases.
#pragma once

#include "cli/shared/child_runs.h"
#include "tipbench/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tipbench::cli {

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

}  // namespace tipbench::cli
