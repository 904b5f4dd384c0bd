#include "tipbench/processes/child_signals.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <string>
#include <thread>

namespace tipbench {

namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_child = 0;  // pid being waited for, 0 when none
struct sigaction g_old_int {
}, g_old_term{};

// Async-signal-safe: records the signal and passes it on (kill is safe in a handler).
void on_termination(int signal_number) {
  g_signal = signal_number;
  if (const pid_t child = static_cast<pid_t>(g_child); child > 0) ::kill(child, signal_number);
}

}  // namespace

ForwardTerminationSignals::ForwardTerminationSignals() {
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_termination;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR, and the wait notices
  ::sigaction(SIGINT, &action, &g_old_int);
  ::sigaction(SIGTERM, &action, &g_old_term);
}

ForwardTerminationSignals::~ForwardTerminationSignals() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
}

int ForwardTerminationSignals::pending() { return static_cast<int>(g_signal); }

ChildEnd wait_forwarding_signals(pid_t pid, std::chrono::seconds grace) {
  g_child = pid;
  ChildEnd end;
  // A signal that came before the child was published: the child has not heard of it yet.
  if (const int early = static_cast<int>(g_signal); early != 0) ::kill(pid, early);
  bool done = false;
  while (!done && g_signal == 0) {
    const pid_t r = ::waitpid(pid, &end.status, 0);
    if (r == pid) done = true;
    if (r < 0 && errno != EINTR) {
      g_child = 0;
      throw std::runtime_error("waitpid failed for child " + std::to_string(pid));
    }
  }
  if (!done) {  // forwarded: the child's turn to stop, within the grace period
    end.signal = static_cast<int>(g_signal);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (!done) {
      const pid_t r = ::waitpid(pid, &end.status, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) {
        done = true;
      } else if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &end.status, 0) < 0 && errno == EINTR) {
        }
        done = true;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  g_child = 0;
  if (end.signal == 0 && g_signal != 0) end.signal = static_cast<int>(g_signal);  // arrived as the child ended
  return end;
}

void die_of_signal(int signal_number) {
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
  std::_Exit(128 + signal_number);  // if the signal was blocked
}

}  // namespace tipbench
