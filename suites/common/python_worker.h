// A Python worker process (python/tipbench_worker, docs/python-worker.md): started with pipes
// for its stdin and stdout and its stderr in a log file, asked one JSON request per line, each
// reply read back within a timeout. For the tips that exist only in Python (torch.compile) and for
// Python eager beside tipbench's C++ step. Example:
//   PythonWorker worker(worker_launch("/tmp/w.log"));
//   nlohmann::json hello = worker.request({{"op", "hello"}}, std::chrono::seconds(60));
#pragma once

#include "tipbench/suite/suite.h"  // ArmUnavailable

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tipbench::suites {

// The worker failed: it could not start, died, hung past the timeout, answered with something that
// is not a reply, or replied {"ok": false, "error": ...}. One line, naming the worker's log.
struct WorkerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct WorkerLaunch {
  std::vector<std::string> argv;                   // argv[0] a path: python -m tipbench_worker
  std::map<std::string, std::string> environment;  // set (or replaced) on top of this process's
  std::string log_path;                            // the worker's stderr (and anything it prints)
};

// The project's worker: the Python of $TIPBENCH_PYTHON, else the build's (the project's .venv),
// running python/tipbench_worker from $TIPBENCH_WORKER_DIR, else the source tree's python/.
WorkerLaunch worker_launch(const std::string& log_path);

class PythonWorker {
 public:
  // Throws ArmUnavailable when the Python does not exist (the arm is then skipped with the reason).
  explicit PythonWorker(const WorkerLaunch& launch);
  ~PythonWorker();  // asks it to quit, waits a moment, then kills it
  PythonWorker(const PythonWorker&) = delete;
  PythonWorker& operator=(const PythonWorker&) = delete;

  // The reply to `request` ({"ok": true, ...}). Throws WorkerError on anything else, and
  // ArmUnavailable for a reply that says the worker cannot run here ({"unavailable": why}).
  nlohmann::json request(const nlohmann::json& request, std::chrono::duration<double> timeout);
  const std::string& log_path() const { return log_path_; }

 private:
  [[noreturn]] void fail(const std::string& what);
  std::string read_line(std::chrono::duration<double> timeout);

  std::string log_path_;
  pid_t pid_ = -1;
  int socket_ = -1;  // the worker's stdin and stdout
  std::string buffered_;
  bool dead_ = false;
};

}  // namespace tipbench::suites
