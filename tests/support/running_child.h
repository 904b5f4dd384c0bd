// A program started as a child process that the test watches while it runs: poll its stderr or
// a file, signal it, then wait with a timeout. Its stdout and stderr go to files in log_dir.
// Killed (SIGKILL) on destruction if still running. For a program run to its end, use
// run_child (child_process.h).
//   tipbench::testing::RunningChild child({TIPBENCH_BINARY, "run", ...}, logs);
//   ASSERT_TRUE(child.wait_for_stderr("suite(s) on", std::chrono::seconds(120))) << child.describe();
//   ::kill(child.pid(), SIGINT);  ASSERT_TRUE(child.wait(std::chrono::seconds(60)));
#pragma once

#include "child_process.h"
#include "scratch_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace tipbench::testing {

class RunningChild {
 public:
  // args[0] is the program; extra_env replaces or adds to this process's environment.
  RunningChild(std::vector<std::string> args, const std::filesystem::path& log_dir,
               const std::map<std::string, std::string>& extra_env = {})
      : out_(log_dir / "stdout.txt"), err_(log_dir / "stderr.txt") {
    std::vector<std::string> env = child_environment(extra_env);
    std::vector<char*> argv = c_string_array(args), envp = c_string_array(env);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pid_ = -1;
  }
  RunningChild(const RunningChild&) = delete;
  RunningChild& operator=(const RunningChild&) = delete;
  ~RunningChild() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Waits for the child up to timeout; false when it is still running then.
  bool wait(std::chrono::seconds timeout) {
    return poll_until([] { return false; }, timeout) || reaped_;
  }
  // Polls stderr until it contains needle; false on timeout or when the child ended without it.
  bool wait_for_stderr(const std::string& needle, std::chrono::seconds timeout) {
    return poll_until([&] { return stderr_text().find(needle) != std::string::npos; }, timeout) &&
           stderr_text().find(needle) != std::string::npos;
  }
  // Polls until the file exists; false on timeout or when the child ended first without it.
  // True once `holds` does (checked every 50 ms while the child runs); false on timeout or exit.
  bool wait_until(const std::function<bool()>& holds, std::chrono::seconds timeout) {
    return poll_until(holds, timeout) && holds();
  }
  bool wait_for_file(const std::filesystem::path& path, std::chrono::seconds timeout) {
    return poll_until([&] { return std::filesystem::exists(path); }, timeout) && std::filesystem::exists(path);
  }

  bool exited() const { return reaped_ && WIFEXITED(status_); }
  int exit_code() const { return WEXITSTATUS(status_); }
  bool signaled() const { return reaped_ && WIFSIGNALED(status_); }
  int signal() const { return WTERMSIG(status_); }
  std::string stdout_text() const { return read_bytes(out_); }
  std::string stderr_text() const { return read_bytes(err_); }
  std::string describe() const {
    std::string s = exited()     ? "exit " + std::to_string(exit_code())
                    : signaled() ? "signal " + std::to_string(signal())
                                 : "running";
    return s + "\n--- stdout ---\n" + stdout_text() + "\n--- stderr ---\n" + stderr_text();
  }

 private:
  // True as soon as done() holds, or once the child has been reaped; false on timeout.
  bool poll_until(const std::function<bool()>& done, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      if (!reaped_) {
        const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
        if (r == pid_) reaped_ = true;
        if (r < 0 && errno != EINTR) return false;
      }
      if (reaped_) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::filesystem::path out_, err_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

}  // namespace tipbench::testing
