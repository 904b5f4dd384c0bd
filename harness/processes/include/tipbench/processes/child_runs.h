// Measuring by running `tipbench run` (or a build) in child processes, as gate, advise and
// history's confirm and bisect do: one child at a time, its output in a log, SIGINT/SIGTERM passed
// on to it (ForwardTerminationSignals, child_signals.h), its failures typed errors with one line
// (the CLI's with_child_runs maps them to exit codes).
//   const Result r = run_once(self, {"--suite", "zero_grad", "--quick"}, "out/r.json", "out/r.log");
#pragma once

#include "tipbench/results/result.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tipbench {

// A SIGINT or SIGTERM reached this process while a child ran (it was passed on and the child waited
// for) or before one started (`log` empty then).
struct ChildInterrupted : std::runtime_error {
  ChildInterrupted(int signal_number, std::string child_log)
      : std::runtime_error("interrupted"), signal(signal_number), log(std::move(child_log)) {}
  int signal;
  std::string log;
};

// A child `run` that did not give a result: it could not start, exited with anything but 0 or 1
// (1: an arm failed, which the result records), was killed, or wrote no readable result. One
// line naming its log and the child's own last error line; the command ends with exit 4.
struct ChildRunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs argv (argv[0] a path) with stdout and stderr going to `log`; returns the exit status
// (128 + N when killed by signal N). A SIGINT or SIGTERM to this process is passed on to the child,
// which is waited for (ForwardTerminationSignals, set up by the command), then ChildInterrupted is
// thrown; none is started after such a signal. Throws std::runtime_error when it cannot start.
int spawn_logged(const std::vector<std::string>& args, const std::string& log);

// One `run` of one binary with these args plus --out; returns the result. Same errors.
Result run_once(const std::string& binary, std::vector<std::string> args, const std::string& out,
                const std::string& log);

// `BIN run ARGS --dry-run`: the binary checks the arguments it will be given, measuring nothing.
struct ChildDryRun {
  int code = 0;
  std::string error;  // the child's last `error: ` line, without that prefix ("" when none)
};
ChildDryRun child_dry_run(const std::string& binary, std::vector<std::string> args, const std::string& log);

// args without --suite/--model/--batch-size/--out/--seed/--blocks and their values.
std::vector<std::string> strip_selection(const std::vector<std::string>& args);
// --suite S [--model M] [--batch-size B] selecting one case of `result` (from its params; no
// --model for a run on a model file, whose --model-file stays in the run's args).
std::vector<std::string> select_case(const Result& result, const std::string& suite, const std::string& case_name);

// mkdir -p (not std::filesystem: libtorch.so exports its own copies of those functions); throws
// std::runtime_error naming the folder it cannot make.
void make_dirs(const std::string& dir);

// A regular file this process may execute (access(X_OK) alone says yes to a directory for root).
bool is_executable(const std::string& path);

}  // namespace tipbench
