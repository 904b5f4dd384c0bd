#include "tipbench/processes/child_runs.h"

#include "tipbench/processes/child_signals.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

extern char** environ;

namespace tipbench {

namespace {

// The child's last `error: ` line, else (a binary that words its flag errors otherwise) the log's
// first line.
std::string last_error_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, first, last;
  while (std::getline(in, line)) {
    if (first.empty()) first = line;
    if (line.rfind("error: ", 0) == 0) last = line.substr(7);  // the gate's own line says "error:"
  }
  if (last.empty()) last = first;
  return last.size() > 400 ? last.substr(0, 400) + "..." : last;
}

}  // namespace

int spawn_logged(const std::vector<std::string>& args, const std::string& log) {
  if (const int signal = ForwardTerminationSignals::pending()) throw ChildInterrupted(signal, "");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, copy[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", args[0], std::strerror(rc)));
  const ChildEnd end = wait_forwarding_signals(pid);
  if (end.signal != 0) throw ChildInterrupted(end.signal, log);
  const int status = end.status;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

void make_dirs(const std::string& dir) {
  for (std::size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
    const std::string prefix = dir.substr(0, at);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      throw std::runtime_error(fmt::format("cannot create {}: {}", prefix, std::strerror(errno)));
    }
    if (at == std::string::npos) break;
  }
}

namespace {

bool is_numeric(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

bool is_executable(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

Result run_once(const std::string& binary, std::vector<std::string> args, const std::string& out,
                const std::string& log) {
  if (const auto slash = log.rfind('/'); slash != std::string::npos && slash > 0) make_dirs(log.substr(0, slash));
  args.insert(args.begin(), {binary, "run"});
  args.insert(args.end(), {"--out", out});
  int code = 0;
  try {
    code = spawn_logged(args, log);
  } catch (const ChildInterrupted&) {
    throw;
  } catch (const std::exception& e) {
    throw ChildRunError(fmt::format("`{} run` could not start: {} (log: {})", binary, e.what(), log));
  }
  auto failure = [&](const std::string& what) {
    const std::string said = last_error_line(log);
    return ChildRunError(fmt::format("`{} run` {}; its log: {}{}", binary, what, log, said.empty() ? "" : ": " + said));
  };
  if (code > 128) throw failure(fmt::format("was killed by signal {}", code - 128));
  if (code != 0 && code != 1) throw failure(fmt::format("exited with {}", code));
  try {
    return read_result(out);
  } catch (const InputError& e) {  // the child's output, not the user's input: exit 4
    throw failure(fmt::format("exited with {} but left no readable result ({})", code, e.what()));
  }
}

ChildDryRun child_dry_run(const std::string& binary, std::vector<std::string> args, const std::string& log) {
  if (const auto slash = log.rfind('/'); slash != std::string::npos && slash > 0) make_dirs(log.substr(0, slash));
  args.insert(args.begin(), {binary, "run"});
  args.push_back("--dry-run");
  ChildDryRun r;
  try {
    r.code = spawn_logged(args, log);
  } catch (const ChildInterrupted&) {
    throw;
  } catch (const std::exception& e) {
    throw ChildRunError(fmt::format("`{} run --dry-run` could not start: {} (log: {})", binary, e.what(), log));
  }
  r.error = last_error_line(log);
  return r;
}

std::vector<std::string> strip_selection(const std::vector<std::string>& args) {
  static const std::set<std::string> with_value{"--suite", "--model",  "--batch-size", "--out",
                                                "--seed",  "--blocks", "--max-blocks", "--time-budget"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    const auto eq = a.find('=');
    if (eq != std::string::npos && with_value.contains(a.substr(0, eq))) continue;
    if (with_value.contains(a)) {
      ++i;  // and its value
      continue;
    }
    out.push_back(a);
  }
  return out;
}

std::vector<std::string> select_case(const Result& result, const std::string& suite, const std::string& case_name) {
  std::vector<std::string> args{"--suite", suite};
  for (const auto& s : result.suites) {
    for (const auto& c : s.cases) {
      if (c.name != case_name) continue;
      for (const auto& [name, value] : c.params) {
        // A model file's run names its model with --model-file, which the run's own args keep.
        if (name == "model" && result.context.model_file.is_null()) args.insert(args.end(), {"--model", value});
        if (name == "batch" && is_numeric(value)) args.insert(args.end(), {"--batch-size", value});
      }
    }
  }
  return args;
}

}  // namespace tipbench
