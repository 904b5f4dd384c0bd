#include "tipbench/environment/this_process.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>

namespace tipbench {

namespace {

std::string utc_time(const char* format) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  std::array<char, 32> buffer{};
  std::strftime(buffer.data(), buffer.size(), format, &tm);
  return buffer.data();
}

}  // namespace

std::string compact_utc_timestamp() { return utc_time("%Y%m%dT%H%M%SZ"); }

std::string utc_timestamp() { return utc_time("%Y-%m-%dT%H:%M:%SZ"); }

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return name.data();
}

std::string self_executable_path() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : path.string();
}

}  // namespace tipbench
