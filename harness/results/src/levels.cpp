#include "tipbench/results/levels.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

namespace tipbench {

std::string join_levels(const Levels& levels) {
  std::string out;
  for (const auto& [key, value] : levels) {
    if (!out.empty()) out += '/';
    out += key + ':' + value;
  }
  return out;
}

const std::string& level(const Levels& levels, const std::string& key) {
  for (const auto& [k, v] : levels) {
    if (k == key) return v;
  }
  throw std::out_of_range("no level '" + key + "' in {" + join_levels(levels) + "}");
}

std::optional<std::string> find_level(const Levels& levels, const std::string& key) {
  for (const auto& [k, v] : levels) {
    if (k == key) return v;
  }
  return std::nullopt;
}

namespace {

[[noreturn]] void not_a_number(const std::string& key, const std::string& value, const char* what) {
  throw std::invalid_argument("level '" + key + "' is '" + value + "', not " + what);
}

}  // namespace

std::int64_t level_int(const Levels& levels, const std::string& key) {
  const std::string& value = level(levels, key);
  std::int64_t out = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, out);
  if (value.empty() || ec != std::errc() || ptr != end) not_a_number(key, value, "a whole number");
  return out;
}

double level_number(const Levels& levels, const std::string& key) {
  const std::string& value = level(levels, key);
  double out = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, out, std::chars_format::general);
  if (value.empty() || ec != std::errc() || ptr != end || !std::isfinite(out)) not_a_number(key, value, "a number");
  return out;
}

}  // namespace tipbench
