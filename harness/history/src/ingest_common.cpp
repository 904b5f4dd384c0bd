#include "ingest_common.h"

#include "tipbench/result.h"

#include <chrono>
#include <cstdlib>
#include <ctime>

namespace tipbench::history {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string model_sha256_of(const Result& r) {
  if (!r.context.model_file.is_object()) return "";
  return r.context.model_file.value("sha256", "");
}

long die_after_samples() {
  const char* v = std::getenv("TIPBENCH_HISTORY_TEST_DIE_AFTER_SAMPLES");
  return v ? std::strtol(v, nullptr, 10) : -1;
}

}  // namespace tipbench::history
