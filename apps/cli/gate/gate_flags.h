// Internal to the CLI: `tipbench gate`'s flags as parsed, the rule that each mode's own flags are
// refused in the other, and the gate config the flags make. Example (gate_command.cpp):
//   check_mode_flags(flags, /*interleaved=*/true);
//   const gate::GateConfig config = load_config(flags);
#pragma once

#include "cli/shared/cli_checks.h"
#include "tipbench/gate/gate_config.h"

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace tipbench::cli {

struct GateFlags {
  std::string baseline;
  std::string current;
  std::string base_binary;
  std::string head_binary;
  std::string base_model_file;  // interleaved: two versions of a user's model, one binary
  std::string head_model_file;
  bool paired = false;
  bool across_software = false;
  std::string config_path;
  double threshold_pct = 0;
  double alpha = 0;
  std::string baselines_dir = "results/baselines";
  bool no_rerun = false;
  std::string rerun_binary;
  int blocks = 8;
  std::vector<std::string> suites;
  std::vector<std::string> models;
  std::string device;
  bool full = false;
  std::vector<std::string> run_args;
  double head_inject_slowdown_pct = 0;
  std::string head_inject_slowdown_op;  // with it: spent inside this op (run's --inject-slowdown-op)
  int head_inject_extra_ops = 0;        // calibration of the count gate (run's --inject-extra-ops)
  bool explain = false;                 // explain every check, not only a FAIL (explain.h)
  bool counts = false;                  // interleaved: counted work only (one block a side, no time checks)
  std::string out_dir;
  std::string markdown_path;
  std::string json_path;
  std::uint64_t seed = 0;
  std::set<std::string> given;  // the flags typed, as typed ("--suite")
};

// Each mode's own flags: given in the other mode they would be ignored without a word. Throws
// UsageError naming the first such flag.
void check_mode_flags(const GateFlags& f, bool interleaved);

// The config file (or the defaults), its suites checked against the registered ones, then
// --threshold and --alpha over it. Throws InputError.
gate::GateConfig load_config(const GateFlags& f);

}  // namespace tipbench::cli
