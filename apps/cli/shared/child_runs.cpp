#include "child_runs.h"

#include "cli_checks.h"
#include "tipbench/processes/child_signals.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>

namespace tipbench::cli {

int with_child_runs(const std::string& label, const std::function<int()>& body,
                    const std::function<void()>& after_failure) {
  ForwardTerminationSignals forwarding;
  try {
    return body();
  } catch (const ChildInterrupted& e) {
    fmt::print(stderr, "{}: interrupted by {}{}\n", label, e.signal == SIGINT ? "SIGINT" : "SIGTERM",
               e.log.empty() ? "" : " (the running child got it too; its log: " + e.log + ")");
    std::fflush(stderr);
    die_of_signal(e.signal);
  } catch (const UsageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  } catch (const ChildRunError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_summary(e));
  }
  if (after_failure) after_failure();
  return exit_code::internal;
}

}  // namespace tipbench::cli
