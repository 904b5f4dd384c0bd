// Internal to the CLI: the commands that measure in child runs (tipbench/processes/child_runs.h) — gate,
// advise, history's confirm and bisect — run under with_child_runs, which maps the child runs'
// errors to one line and an exit code.
#pragma once

#include "tipbench/processes/child_runs.h"

#include <functional>
#include <string>

namespace tipbench::cli {

// Runs `body` (a command that starts child runs or builds) with SIGINT/SIGTERM passed on to the
// running child (ForwardTerminationSignals), and turns its errors into one line and an exit code:
// UsageError/InputError 2, ChildRunError and anything else 4. An interrupted child ends this
// process by the same signal, after "<label>: interrupted by SIGINT" naming the child's log.
// `after_failure` runs after the one line of an exit 4 (the gate adds its verdict line).
int with_child_runs(const std::string& label, const std::function<int()>& body,
                    const std::function<void()>& after_failure = {});

}  // namespace tipbench::cli
