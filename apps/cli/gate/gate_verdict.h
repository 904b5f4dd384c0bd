// Internal to the CLI: where the gate's verdict goes, shared by its three modes. The outputs are
// checked before anything is measured; the verdict is printed, then written as Markdown and JSON
// where asked for. Example (gate_interleaved.cpp):
//   check_outputs(flags, work_dir);   // throws UsageError
//   ...
//   return deliver(flags, report, base_path, head_path, work_dir);
#pragma once

#include "gate_flags.h"
#include "tipbench/gate/decision.h"

#include <string>

namespace tipbench::cli {

// Fail fast: every output the gate will write (--markdown, --json, the out dir), checked before
// anything is measured. Throws UsageError.
void check_outputs(const GateFlags& f, const std::string& out_dir);

// results/gate/<UTC time>: where a session keeps its results and logs when --out-dir is not given.
std::string default_out_dir();

// The verdict on the console, then the files (gate.md and gate.json in `out_dir` unless named);
// the last line names the code really returned: the report's, or 4 when a file could not be written.
int deliver(const GateFlags& f, const gate::GateReport& report, const std::string& base_label,
            const std::string& current_label, const std::string& out_dir);

}  // namespace tipbench::cli
