// Runs a program as a child process for end-to-end tests: stdout and stderr go to files (or
// /dev/null), extra environment variables replace or add to this process's, and the call waits.
//   const auto o = tipbench::testing::run_child({TIPBENCH_BINARY, "list"}, dir / "out.txt", dir / "err.txt");
//   EXPECT_EQ(o.code, 0) << o.err;
#pragma once

#include "scratch_dir.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace tipbench::testing {

struct ChildOutcome {
  int code = -1;       // the exit status; 128 + the signal when killed; -1 when it could not start
  double seconds = 0;  // wall time from start to exit
  std::string out;     // what it wrote to stdout ("" when discarded)
  std::string err;     // what it wrote to stderr ("" when discarded)
};

// This process's environment with extra_env's variables replacing or added to it.
inline std::vector<std::string> child_environment(const std::map<std::string, std::string>& extra_env) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (!extra_env.contains(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  for (const auto& [k, v] : extra_env) env.push_back(k + "=" + v);
  return env;
}

// posix_spawn's argv/envp: pointers into `strings` (which must outlive them), NULL-terminated.
inline std::vector<char*> c_string_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// An empty path discards that stream.
inline ChildOutcome run_child(std::vector<std::string> args, const std::filesystem::path& out_path,
                              const std::filesystem::path& err_path,
                              const std::map<std::string, std::string>& extra_env = {}) {
  std::vector<std::string> env = child_environment(extra_env);
  std::vector<char*> argv = c_string_array(args), envp = c_string_array(env);

  const std::string out = out_path.empty() ? "/dev/null" : out_path.string();
  const std::string err = err_path.empty() ? "/dev/null" : err_path.string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ChildOutcome o;
  const auto started = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return o;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return o;
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!out_path.empty()) o.out = read_bytes(out_path);
  if (!err_path.empty()) o.err = read_bytes(err_path);
  return o;
}

}  // namespace tipbench::testing
