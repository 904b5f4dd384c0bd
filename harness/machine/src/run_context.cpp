#include "tipbench/machine/collect_fingerprint.h"
#include "tipbench/machine/run_context.h"

#include "tipbench/common/checked_text.h"
#include "tipbench/machine/environment.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#ifndef TIPBENCH_SOURCE_DIR
#define TIPBENCH_SOURCE_DIR ""
#endif
#ifndef TIPBENCH_VERSION
#define TIPBENCH_VERSION "0.0.0"
#endif

namespace tipbench {

namespace {

// Output of a shell command, trailing newline removed; "" when it fails.
std::string command_output(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 256> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe) != nullptr) out += chunk.data();
  const int rc = ::pclose(pipe);
  if (status) *status = rc;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

GitState source_git_state() {
  // A relocated binary (the device bundle, scripts/bundle.sh) has no source tree beside it: its
  // run.sh passes the state that was recorded when the bundle was packed.
  // A value that is no commit is not recorded (it would make the result unreadable: checked_text.h).
  if (const char* sha = std::getenv("TIPBENCH_GIT_SHA"); sha != nullptr && is_git_sha(sha)) {
    const char* dirty = std::getenv("TIPBENCH_GIT_DIRTY");
    return {.sha = sha, .dirty = dirty != nullptr && std::string_view(dirty) == "1"};
  }
  GitState git;
  const std::string dir = TIPBENCH_SOURCE_DIR;
  if (dir.empty() || !std::filesystem::exists(dir + "/.git")) return git;
  int status = -1;
  git.sha = command_output("git -C '" + dir + "' rev-parse HEAD 2>/dev/null", &status);
  if (status != 0 || !is_git_sha(git.sha)) return {};
  git.dirty = !command_output("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null").empty();
  return git;
}

RunContext make_run_context(const std::vector<std::string>& argv, const c10::Device& device,
                            const MeasureSettings& settings) {
  RunContext c;
  c.tipbench_version = TIPBENCH_VERSION;
  c.fingerprint = collect_fingerprint(device.is_cuda());
  c.fingerprint_slug = fingerprint_slug(c.fingerprint);
  c.git = source_git_state();
  c.argv = argv;
  c.timestamp_utc = utc_timestamp();
  c.hostname = host_name();
  c.device = device.str();
  c.settings = settings;
  c.warnings = environment_warnings(device.is_cuda());
  return c;
}

}  // namespace tipbench
