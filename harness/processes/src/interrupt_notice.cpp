#include "tipbench/processes/interrupt_notice.h"

#include <signal.h>
#include <sys/stat.h>
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

// A staged notice: true once `staged_path` is no longer the file it was when staged (a rename
// replaced it, or made it). Checked with stat(), which is async-signal-safe.
char staged_notice[kNoticeBytes];
std::atomic<std::size_t> staged_length{0};
char staged_path[kNoticeBytes];
std::atomic<bool> staged{false};
dev_t staged_dev = 0;
ino_t staged_ino = 0;  // 0: the file did not exist when staged

bool staged_file_replaced() {
  struct stat st {};
  if (::stat(staged_path, &st) != 0) return false;
  return st.st_ino != staged_ino || st.st_dev != staged_dev;
}

void write_all(const char* text, std::size_t left) {
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) break;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

extern "C" void on_signal(int signal_number) {
  if (staged.load() && staged_file_replaced()) {
    write_all(staged_notice, staged_length.load());
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
    return;
  }
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
  staged.store(false);
  const int next = 1 - current.load();
  const std::string line = notice.ends_with('\n') ? notice : notice + "\n";
  const std::size_t n = std::min(line.size(), kNoticeBytes);
  std::memcpy(notices[next], line.data(), n);
  lengths[next].store(n);
  current.store(next);
}

void stage_interrupt_notice(const std::string& notice, const std::string& path) {
  staged.store(false);  // the handler ignores the buffers while they are written
  const std::string line = notice.ends_with('\n') ? notice : notice + "\n";
  const std::size_t n = std::min(line.size(), kNoticeBytes);
  std::memcpy(staged_notice, line.data(), n);
  staged_length.store(n);
  const std::size_t p = std::min(path.size(), kNoticeBytes - 1);
  std::memcpy(staged_path, path.data(), p);
  staged_path[p] = '\0';
  struct stat st {};
  if (::stat(staged_path, &st) == 0) {
    staged_dev = st.st_dev;
    staged_ino = st.st_ino;
  } else {
    staged_dev = 0;
    staged_ino = 0;
  }
  staged.store(true);
}

void unstage_interrupt_notice() { staged.store(false); }

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
