#include "distributed/launcher.h"

#include "distributed/session.h"

#include "tipbench/common/exit_codes.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace tipbench::distributed {

namespace {

// The launcher's own environment minus any launcher variables it inherited, plus the rank's.
std::vector<std::string> rank_environment(int rank, int nproc, int port) {
  static const char* const kOwned[] = {"RANK=",
                                       "LOCAL_RANK=",
                                       "WORLD_SIZE=",
                                       "LOCAL_WORLD_SIZE=",
                                       "MASTER_ADDR=",
                                       "MASTER_PORT=",
                                       "TIPBENCH_LAUNCHER=",
                                       "TORCHELASTIC_USE_AGENT_STORE=",
                                       "TORCHELASTIC_RUN_ID="};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    bool owned = false;
    for (const char* prefix : kOwned) owned = owned || std::strncmp(*e, prefix, std::strlen(prefix)) == 0;
    if (!owned) env.emplace_back(*e);
  }
  env.push_back(fmt::format("RANK={}", rank));
  env.push_back(fmt::format("LOCAL_RANK={}", rank));
  env.push_back(fmt::format("WORLD_SIZE={}", nproc));
  env.push_back(fmt::format("LOCAL_WORLD_SIZE={}", nproc));
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back(fmt::format("MASTER_PORT={}", port));
  env.push_back("TIPBENCH_LAUNCHER=1");
  return env;
}

pid_t spawn_rank(const LaunchSpec& spec, int rank, int port) {
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = rank_environment(rank, spec.nproc, port);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = ::posix_spawn(&pid, spec.executable.c_str(), nullptr, nullptr, argv.data(), envp.data()); rc != 0) {
    throw std::runtime_error(fmt::format("cannot start rank {} ({}): {}", rank, spec.executable, std::strerror(rc)));
  }
  return pid;
}

// Waits for any child up to `timeout_s` (polling: waitpid has no timeout). Returns 0 on timeout.
pid_t wait_any(int& status, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid != 0) return pid;
    if (std::chrono::steady_clock::now() >= until) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  }
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

int launch_local_ranks(const LaunchSpec& spec) {
  // The store lives in this process, like torchrun's agent store: it outlives any rank, so the
  // survivors can still read each other's heartbeats when one dies.
  quiet_c10d_warnings();
  c10d::TCPStoreOptions options;
  options.port = 0;  // the kernel picks a free port
  options.isServer = true;
  options.waitWorkers = false;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
  const int port = store->getPort();

  std::map<pid_t, int> running;  // pid -> rank
  for (int rank = 0; rank < spec.nproc; ++rank) running[spawn_rank(spec, rank, port)] = rank;

  int rank0_code = exit_code::internal;
  std::optional<std::string> failure;
  bool rank0_killed = false;
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = failure ? wait_any(status, spec.grace_s) : wait_any(status, 1e9);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pid == 0) {  // the grace period ran out: stop whoever is left
      for (const auto& [p, rank] : running) {
        fmt::print(stderr, "tipbench launcher: rank {} did not exit; killing it\n", rank);
        ::kill(p, SIGKILL);
      }
      while (!running.empty()) {
        const pid_t p = ::waitpid(-1, &status, 0);
        if (p < 0 && errno != EINTR) break;
        running.erase(p);
      }
      break;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const int rank = it->second;
    running.erase(it);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (rank == 0) rank0_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (!ok && !failure) {
      failure = fmt::format("rank {} {}", rank, describe_wait_status(status));
      // Rank 0 exiting with a code has said why itself (a failed arm after a finished run, or a
      // fault it named); the others end by themselves within the grace period, else are killed.
      // Any rank killed by a signal, rank 0 included, said nothing: name it here.
      if (rank != 0 || WIFSIGNALED(status)) {
        fmt::print(stderr, "tipbench launcher: {}; stopping the other ranks\n", *failure);
        for (const auto& [p, r] : running) ::kill(p, SIGTERM);
      }
      rank0_killed = rank == 0 && WIFSIGNALED(status);
    }
  }
  if (failure && (failure->rfind("rank 0 ", 0) != 0 || rank0_killed)) {
    fmt::print(stderr, "error: the run failed: {} (no result written)\n", *failure);
    return exit_code::failed;
  }
  return rank0_code;
}

}  // namespace tipbench::distributed
