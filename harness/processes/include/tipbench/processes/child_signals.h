// Waiting for a child process without orphaning it. A CI runner that cancels a job signals the
// process it started (SIGINT or SIGTERM), not that process's children; a child left running
// keeps measuring on a machine the next job wants. While a ForwardTerminationSignals lives,
// those two signals are caught and passed on to the child being waited for
// (wait_forwarding_signals), which then gets a grace period to finish its own clean-up (a `run`
// keeps its finished cases in its .partial file) before it is killed. Example:
//   ForwardTerminationSignals forwarding;                 // for the command's lifetime
//   const ChildEnd end = wait_forwarding_signals(pid);    // posix_spawn'd pid
//   if (end.signal != 0) { say what was stopped; die_of_signal(end.signal); }
#pragma once

#include <sys/types.h>

#include <chrono>

namespace tipbench {

class ForwardTerminationSignals {
 public:
  ForwardTerminationSignals();   // SIGINT and SIGTERM handlers (no SA_RESTART), old ones kept
  ~ForwardTerminationSignals();  // the old handlers back
  ForwardTerminationSignals(const ForwardTerminationSignals&) = delete;
  ForwardTerminationSignals& operator=(const ForwardTerminationSignals&) = delete;
  // The signal received since construction (SIGINT or SIGTERM), or 0.
  static int pending();
};

struct ChildEnd {
  int status = 0;  // waitpid's status
  int signal = 0;  // the termination signal forwarded to the child, 0 when none arrived
};

// Waits for `pid`. A SIGINT or SIGTERM this process receives meanwhile (or received before) is
// sent on to the child, which then has `grace` to end before SIGKILL. Throws std::runtime_error
// when waitpid fails.
ChildEnd wait_forwarding_signals(pid_t pid, std::chrono::seconds grace = std::chrono::seconds(10));

// Ends this process as the signal would have (default action restored, raised): a shell then
// reports 128 + signal.
[[noreturn]] void die_of_signal(int signal_number);

}  // namespace tipbench
