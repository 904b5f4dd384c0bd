#include "python_worker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace tipbench::suites {

namespace {

// A reply holds at most a trial's step times (the harness caps steps per trial); far more is not
// a reply.
constexpr std::size_t kMaxReplyBytes = 16u << 20;

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// The last non-empty line of the worker's log, for the one-line error.
std::string last_log_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.size() > 300 ? last.substr(0, 300) + "..." : last;
}

std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (!overrides.contains(entry.substr(0, entry.find('=')))) out.push_back(entry);
  }
  for (const auto& [name, value] : overrides) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

// The build's defaults, read through volatile pointers: the compiler then keeps each path whole
// in the binary (a short literal may otherwise be built from immediates, a fragment that the
// bundle's check for build-machine paths, scripts/bundle.sh, cannot tell from a path).
namespace {
const char* volatile kBuiltPython = TIPBENCH_WORKER_PYTHON;
const char* volatile kBuiltWorkerDir = TIPBENCH_WORKER_DIR;
}  // namespace

WorkerLaunch worker_launch(const std::string& log_path) {
  const std::string python = env_or("TIPBENCH_PYTHON", kBuiltPython);
  const std::string package_dir = env_or("TIPBENCH_WORKER_DIR", kBuiltWorkerDir);
  std::string path = package_dir;
  if (const char* existing = std::getenv("PYTHONPATH"); existing != nullptr && *existing != '\0') {
    path += std::string(":") + existing;
  }
  // Unbuffered stderr: a worker that dies leaves its last words in the log.
  return {.argv = {python, "-m", "tipbench_worker"},
          .environment = {{"PYTHONPATH", path}, {"PYTHONUNBUFFERED", "1"}},
          .log_path = log_path};
}

PythonWorker::PythonWorker(const WorkerLaunch& launch) : log_path_(launch.log_path) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw WorkerError(fmt::format("cannot make the worker's socket: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);  // dup2 clears close-on-exec
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // Its own process group: a terminal's Ctrl-C reaches the harness, which ends its workers itself.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> args = launch.argv;
  std::vector<std::string> env = environment_with(launch.environment);
  auto argv = pointers(args);
  auto envp = pointers(env);
  const int rc = ::posix_spawn(&pid_, args.at(0).c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    dead_ = true;
    const std::string why = fmt::format("cannot start the Python worker {}: {}", args[0], std::strerror(rc));
    if (rc == ENOENT || rc == EACCES) {  // no such Python here: the arm cannot run, nothing failed
      throw ArmUnavailable(why + " (set TIPBENCH_PYTHON to a Python with torch, or run scripts/bootstrap.sh)");
    }
    throw WorkerError(why);
  }
  socket_ = fds[0];
}

PythonWorker::~PythonWorker() {
  if (!dead_) {
    const std::string quit = "{\"op\":\"quit\"}\n";
    (void)::send(socket_, quit.data(), quit.size(), MSG_NOSIGNAL);
    // Up to 5 s to leave on its own (Inductor's compile workers end with it), then killed.
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        dead_ = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!dead_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  if (socket_ >= 0) ::close(socket_);
}

void PythonWorker::fail(const std::string& what) {
  if (!dead_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    dead_ = true;
  }
  const std::string last = last_log_line(log_path_);
  throw WorkerError(fmt::format("{} (worker log {}{}{})", what, log_path_, last.empty() ? "" : ": ", last));
}

std::string PythonWorker::read_line(std::chrono::duration<double> timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (const auto end = buffered_.find('\n'); end != std::string::npos) {
      std::string line = buffered_.substr(0, end);
      buffered_.erase(0, end + 1);
      return line;
    }
    if (buffered_.size() > kMaxReplyBytes) fail(fmt::format("the worker's reply is over {} bytes", kMaxReplyBytes));
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) fail(fmt::format("the worker did not answer within {:.0f} s; killed", timeout.count()));
    pollfd p{.fd = socket_, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 60'000)));
    if (ready < 0 && errno != EINTR) fail(fmt::format("cannot wait for the worker: {}", std::strerror(errno)));
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::recv(socket_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
      dead_ = true;
      fail(WIFSIGNALED(status) ? fmt::format("the worker was killed by signal {}", WTERMSIG(status))
                               : fmt::format("the worker exited with status {}", WEXITSTATUS(status)));
    }
    buffered_.append(chunk, static_cast<std::size_t>(n));
  }
}

nlohmann::json PythonWorker::request(const nlohmann::json& request, std::chrono::duration<double> timeout) {
  const std::string op = request.value("op", "");
  if (dead_) throw WorkerError(fmt::format("\"{}\": the worker has ended (worker log {})", op, log_path_));
  const std::string line = request.dump() + "\n";
  for (std::size_t sent = 0; sent < line.size();) {
    const ssize_t n = ::send(socket_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(fmt::format("\"{}\": cannot write to the worker: {}", op, std::strerror(errno)));
    sent += static_cast<std::size_t>(n);
  }
  const std::string text = read_line(timeout);
  nlohmann::json reply = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object() || !reply.contains("ok") || !reply["ok"].is_boolean()) {
    fail(fmt::format("\"{}\": the worker answered what is not a reply ({:.80})", op, text));
  }
  if (reply["ok"].get<bool>()) return reply;
  if (reply.contains("unavailable") && reply["unavailable"].is_string()) {
    throw ArmUnavailable(reply["unavailable"].get<std::string>());
  }
  const std::string error =
      reply.contains("error") && reply["error"].is_string() ? reply["error"].get<std::string>() : "";
  throw WorkerError(
      fmt::format("\"{}\": {} (worker log {})", op, error.empty() ? "failed" : error.substr(0, 400), log_path_));
}

}  // namespace tipbench::suites
