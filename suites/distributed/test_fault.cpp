#include "distributed/test_fault.h"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace tipbench::distributed {

namespace {

struct InjectedFault {
  int rank = -1;
  int signal = 0;
  long long step = 0;
};

InjectedFault injected_fault() {
  InjectedFault f;
  const char* spec = std::getenv("TIPBENCH_TEST_FAULT");
  if (spec == nullptr) return f;
  char kind[8] = {};
  if (std::sscanf(spec, "%d:%7[a-z]:%lld", &f.rank, kind, &f.step) != 3) return {};
  f.signal = std::string(kind) == "kill" ? SIGKILL : std::string(kind) == "stop" ? SIGSTOP : 0;
  return f;
}

void mark_fault_time() {
  const char* path = std::getenv("TIPBENCH_TEST_FAULT_MARK");
  if (path == nullptr) return;
  std::ofstream(path) << fmt::format(
      "{:.3f}\n", std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

void count_step_for_test_fault(int rank) {
  static const InjectedFault fault = injected_fault();
  static long long steps = 0;
  if (fault.rank != rank || fault.signal == 0 || ++steps != fault.step) return;
  mark_fault_time();
  std::raise(fault.signal);
}

}  // namespace tipbench::distributed
