// Internal to the CLI: finishing an interrupted run (`tipbench run --resume FILE`). The partial
// file holds the run's options and its finished cases; the machine, build and options must be
// the run's own. Example:
//   if (auto problem = resume_options(options, typed_flags, partial)) return usage_error(*problem);
#pragma once

#include "run_options.h"
#include "tipbench/results/partial_run.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace tipbench::cli {

// Reads o.resume into `partial` (throws InputError, also for options the command line would have
// refused, or that disagree with the settings the result recorded) and replaces o's measurement
// options with the run's. The flags in `typed` (as typed with --resume) must agree with the
// run's: else the reason. Flags not typed are never compared.
std::optional<std::string> resume_options(RunOptions& o, const std::set<std::string>& typed, PartialRun& partial);

// Why the finished cases cannot be finished here (another fingerprint, build or device), if so.
std::optional<std::string> resume_context_problem(const RunContext& here, const RunContext& recorded,
                                                  const std::string& file);

// The resumed run's context: the interrupted run's own (start, argv, settings), with the warnings
// found `here` that it lacks and one saying when and from which file it resumed.
RunContext resumed_context(const RunContext& here, const PartialRun& partial, const std::string& file);

std::map<std::string, CaseResult> finished_cases_of(const Result& r);

// "interrupted: N case(s) kept in FILE; finish the run with: tipbench run --resume FILE", with
// the blocks of the case in progress when there is one.
std::string resume_hint(int cases, const std::string& partial_path, const CaseInProgress* in_progress = nullptr);

// The one line when the result cannot be written: the reason, and the partial file only when one
// holding finished cases is on disk (`partial_path` empty: none is), never a file that is not.
std::string result_write_failure(const std::string& reason, const std::string& partial_path);

}  // namespace tipbench::cli
