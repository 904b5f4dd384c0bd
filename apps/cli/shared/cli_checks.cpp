#include "cli_checks.h"

#include "tipbench/common/atomic_file.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/common/real_number.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <regex>

namespace tipbench::cli {

CLI::Validator not_a_flag() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value.size() > 1 && value[0] == '-' && !std::isdigit(static_cast<unsigned char>(value[1]))) {
          return fmt::format("expected a value, got the flag '{}' (did the option lose its value?)", value);
        }
        return {};
      },
      "", "NOT_A_FLAG");
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const auto range = fmt::format("a whole number from {} to {}", min, max);
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) {
          return fmt::format("'{}' is not {}", value, range);
        }
        errno = 0;
        const unsigned long long n = std::strtoull(value.c_str(), nullptr, 10);
        if (errno == ERANGE || n < min || n > max) return fmt::format("{} is not {}", value, range);
        return {};
      },
      fmt::format("INT in [{}, {}]", min, max), "WHOLE_NUMBER");
}

CLI::Validator seed_value() { return whole_number(0, std::numeric_limits<std::uint64_t>::max()); }

CLI::Validator real_number(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const auto range = fmt::format("a number from {:g} to {:g}", min, max);
        const auto x = parse_real(value);
        if (!x) return fmt::format("'{}' is not {} (decimal and finite)", value, range);
        if (*x < min || *x > max) return fmt::format("{} is not {}", value, range);
        return {};
      },
      fmt::format("NUMBER in [{:g}, {:g}]", min, max), "REAL_NUMBER");
}

std::optional<double> parse_duration_s(const std::string& text) {
  static const std::regex part(R"((\d+(?:\.\d+)?)([hms]?))");
  if (text.empty()) return std::nullopt;
  double seconds = 0;
  std::size_t at = 0;
  int last_rank = -1;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), part); it != std::sregex_iterator(); ++it) {
    if (static_cast<std::size_t>(it->position()) != at) return std::nullopt;  // something between the parts
    const std::string unit = (*it)[2].str();
    // A bare number is seconds only alone ("900"): after a unit ("1m5") it could mean 1m05s or
    // 1.5m, so it is refused rather than guessed.
    if (unit.empty() && (at != 0 || static_cast<std::size_t>(it->length()) != text.size())) return std::nullopt;
    // Units in order, each once: 1h30m, not 30m1h or 1m1m.
    const int rank = unit == "h" ? 0 : unit == "m" ? 1 : 2;
    if (rank <= last_rank) return std::nullopt;
    last_rank = rank;
    const auto value = parse_real((*it)[1].str());
    if (!value) return std::nullopt;
    seconds += *value * (unit == "h" ? 3600 : unit == "m" ? 60 : 1);
    at += static_cast<std::size_t>(it->length());
  }
  if (at != text.size()) return std::nullopt;
  return seconds;
}

CLI::Validator duration(double min_s, double max_s) {
  return CLI::Validator(
      [min_s, max_s](std::string& value) -> std::string {
        const auto seconds = parse_duration_s(value);
        if (!seconds) {
          return fmt::format(
              "'{}' is not a duration like 15m, 90s, 1h30m, 2.5m or 900 (seconds): parts h, m, s in that order, each "
              "with its unit",
              value);
        }
        if (*seconds < min_s || *seconds > max_s) {
          return fmt::format("{} is not a duration from {:g} s to {:g} h", value, min_s, max_s / 3600);
        }
        value = fmt::format("{}", *seconds);  // the option stores seconds
        return {};
      },
      "DURATION (15m, 90s, 1h30m)", "DURATION");
}

CLI::Validator utc_time() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        static const std::regex form(R"((\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?Z?)?)");
        std::smatch m;
        const auto in = [&](int i, int low, int high) {
          return !m[i].matched || (std::stoi(m[i].str()) >= low && std::stoi(m[i].str()) <= high);
        };
        if (!std::regex_match(value, m, form) || !in(2, 1, 12) || !in(3, 1, 31) || !in(4, 0, 23) || !in(5, 0, 59) ||
            !in(6, 0, 59)) {
          return fmt::format("'{}' is not a UTC time like 2026-11-20 or 2026-11-20T03:00:00Z", value);
        }
        return {};
      },
      "UTC time (2026-11-20, 2026-11-20T03:00:00Z)", "UTC_TIME");
}

bool output_file_writable(const std::string& flag, const std::string& path) {
  const auto problem = output_file_problem(path);
  if (problem) fmt::print(stderr, "error: {} {}: cannot write there: {}\n", flag, abbreviated(path), *problem);
  return !problem;
}

bool output_dir_writable(const std::string& flag, const std::string& dir) {
  const auto problem = output_dir_problem(dir);
  if (problem) fmt::print(stderr, "error: {} {}: cannot write there: {}\n", flag, abbreviated(dir), *problem);
  return !problem;
}

int usage_error(const std::string& message) {
  fmt::print(stderr, "error: {}\n", message);
  return exit_code::usage;
}

}  // namespace tipbench::cli
