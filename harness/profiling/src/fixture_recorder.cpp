#include "tipbench/profiling/fixture_recorder.h"

#include "tipbench/common/text.h"
#include "tipbench/common/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <filesystem>

namespace tipbench::detail {

namespace {

constexpr std::size_t kMaxBytesPerProcess = 48u << 20;
std::atomic<std::size_t> bytes_written{0};
std::atomic<bool> told{false};

const char* fixture_dir() {
  const char* dir = std::getenv("TIPBENCH_FIXTURE_DIR");
  return dir && *dir ? dir : nullptr;
}

void tell_once(const std::string& why) {
  if (!told.exchange(true)) std::fprintf(stderr, "tipbench: fixtures: %s\n", why.c_str());
}

}  // namespace

bool fixtures_wanted() { return fixture_dir() != nullptr; }

void record_fixture(const std::string& kind, const std::string& arm_name, int block,
                    const nlohmann::ordered_json& content) {
  const char* dir = fixture_dir();
  if (!dir) return;
  const std::string text = content.dump();
  if (bytes_written.fetch_add(text.size()) + text.size() > kMaxBytesPerProcess) {
    tell_once(fmt::format("more than {} MiB in this process: the rest are left out", kMaxBytesPerProcess >> 20));
    return;
  }
  const auto path = std::filesystem::path(dir) /
                    fmt::format("{}.{}.b{}.p{}.json", file_stem_of(kind), file_stem_of(arm_name), block, ::getpid());
  try {
    write_file_atomically(path.string(), text);
  } catch (const std::exception& e) {
    tell_once(e.what());
  }
}

}  // namespace tipbench::detail
