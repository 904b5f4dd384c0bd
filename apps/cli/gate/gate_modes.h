// Internal to the CLI: the gate's three modes, each one function (and file) from parsed flags and
// config to the exit code. Interleaved: head vs base binaries run here, block by block
// (gate_interleaved.cpp). Two result files (gate_files.cpp, the checks both file modes share):
// a stored baseline, unpaired (gate_stored.cpp), or both sides of one interleaved session,
// --paired (gate_paired.cpp). Every mode ends in the same verdict (gate_verdict.h). Example:
//   return interleaved_mode ? gate_interleaved(flags, config) : gate_from_files(flags, config);
#pragma once

#include "tipbench/gate/remeasure.h"
#include "gate_flags.h"
#include "tipbench/results/result.h"

#include <functional>
#include <string>

namespace tipbench::cli {

int gate_interleaved(const GateFlags& f, const gate::GateConfig& config);

// --baseline FILE|auto --current FILE: the checks both file modes share, then the stored or the
// paired mode.
int gate_from_files(const GateFlags& f, const gate::GateConfig& config);
int gate_stored(const GateFlags& f, const gate::GateConfig& config, const Result& current);
int gate_paired(const GateFlags& f, const gate::GateConfig& config, const Result& current);

// Each file is the machine it says it is (its slug is its fingerprint's). Throws InputError.
void check_result_identity(const Result& result, const std::string& path);

// The end both file modes share: evaluate, re-measure the candidates (unless --no-rerun) with
// what `make_remeasure` builds from the effective config and the work dir, deliver the verdict.
using MakeRemeasure = std::function<gate::Remeasure(const gate::GateConfig& config, const std::string& work_dir)>;
int verdict_of_files(const GateFlags& f, const gate::GateConfig& config, const Result& baseline, const Result& current,
                     const std::string& baseline_path, const MakeRemeasure& make_remeasure);

}  // namespace tipbench::cli
