#include "tipbench/interrupt_notice.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace tipbench {

namespace {

// Two fixed buffers: the handler reads the one `current` points at while the other is written,
// so it never sees a half-written notice and never allocates (async-signal-safe).
constexpr std::size_t kNoticeBytes = 4096;
char notices[2][kNoticeBytes];
std::atomic<int> current{0};
std::atomic<std::size_t> lengths[2];

extern "C" void on_signal(int signal_number) {
  const int i = current.load();
  const char* text = notices[i];
  std::size_t left = lengths[i].load();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) break;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
  // Die of the signal itself, so the parent (a shell, CI) sees what happened.
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

}  // namespace

void set_interrupt_notice(const std::string& notice) {
  const int next = 1 - current.load();
  const std::string line = notice.ends_with('\n') ? notice : notice + "\n";
  const std::size_t n = std::min(line.size(), kNoticeBytes);
  std::memcpy(notices[next], line.data(), n);
  lengths[next].store(n);
  current.store(next);
}

void install_interrupt_notice(const std::string& notice) {
  set_interrupt_notice(notice);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

void remove_interrupt_notice() {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
}

}  // namespace tipbench
