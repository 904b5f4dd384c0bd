#include "run_under_callgrind.h"

#include "tipbench/machine/run_context.h"
#include "tipbench/processes/child_runs.h"
#include "tipbench/processes/child_signals.h"
#include "tipbench/profiling/instruction_counter.h"

#include <fmt/format.h>
#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace tipbench::cli {

namespace {

// valgrind's path on PATH, "" when it is not there.
std::string valgrind_on_path() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/valgrind";
    if (is_executable(candidate)) return candidate;
  }
  return "";
}

// The child's dumps go to a folder of its own, removed when it ends.
struct DumpFolder {
  std::string path;
  DumpFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tipbench-callgrind-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error(fmt::format("cannot create a folder for Callgrind's dumps: {}", std::strerror(errno)));
    }
    path = pattern;
  }
  // Not std::filesystem::remove_all: libtorch.so exports its own copies of those functions
  // (child_runs.h). The folder holds files only.
  ~DumpFolder() {
    if (DIR* dir = ::opendir(path.c_str())) {
      while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") ::unlink((path + "/" + name).c_str());
      }
      ::closedir(dir);
    }
    ::rmdir(path.c_str());
  }
};

}  // namespace

std::optional<std::string> callgrind_problem(const RunOptions& o, const c10::Device& device) {
  if (device.is_cuda()) return "--instructions callgrind counts a CPU run: Valgrind cannot run CUDA (use --device cpu)";
  if (o.count_steps == 0) return "--instructions callgrind counts the counted steps: --count-steps 0 turns them off";
  if (o.nproc > 1) return "--instructions callgrind counts one process: not with --nproc";
  if (!inside_callgrind_run() && valgrind_on_path().empty()) {
    return "--instructions callgrind needs valgrind on PATH (Debian: apt-get install valgrind)";
  }
  return std::nullopt;
}

bool inside_callgrind_run() {
  const char* out = std::getenv(detail::kCallgrindOutVariable);
  return RUNNING_ON_VALGRIND != 0 && out != nullptr && *out != '\0';
}

int run_under_callgrind(const std::vector<std::string>& argv) {
  const DumpFolder dumps;
  const std::string out = dumps.path + "/callgrind.out";
  std::vector<std::string> args = {
      valgrind_on_path(), "--tool=callgrind", "--instr-atstart=no",  "--callgrind-out-file=" + out,
      "--dump-line=no",   "--quiet",          self_executable_path()};
  args.insert(args.end(), argv.begin() + 1, argv.end());
  ::setenv(detail::kCallgrindOutVariable, out.c_str(), 1);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  // Valgrind runs an FMA instruction through a software helper (h_generic_calc_MAddF32 took 85% of
  // its time in a small_cnn step, sampled with perf), and oneDNN's AVX2 and AVX-512 kernels are FMA
  // loops: a step took about a thousand times its native CPU time. AVX, oneDNN's widest ISA
  // without FMA, ran it about 45 times faster there. Both sides of a count gate count this same
  // path; a cap the user set stands.
  ::setenv(kOneDnnIsaVariable, kOneDnnIsaUnderCallgrind, 0);
  std::vector<char*> child_argv;
  for (auto& a : args) child_argv.push_back(a.data());
  child_argv.push_back(nullptr);
  fmt::print(stderr,
             "run: counting instructions under Callgrind with oneDNN's ISA capped at {} ({}; Valgrind emulates FMA "
             "slowly); a step runs tens of times slower there\n",
             std::getenv(kOneDnnIsaVariable), kOneDnnIsaVariable);
  const ForwardTerminationSignals forwarding;
  pid_t pid = 0;
  if (const int rc = ::posix_spawn(&pid, args[0].c_str(), nullptr, nullptr, child_argv.data(), environ); rc != 0) {
    throw std::runtime_error(fmt::format("cannot start {}: {}", args[0], std::strerror(rc)));
  }
  const ChildEnd end = wait_forwarding_signals(pid);
  if (end.signal != 0) die_of_signal(end.signal);
  if (WIFSIGNALED(end.status)) return 128 + WTERMSIG(end.status);
  return WIFEXITED(end.status) ? WEXITSTATUS(end.status) : 255;
}

}  // namespace tipbench::cli
