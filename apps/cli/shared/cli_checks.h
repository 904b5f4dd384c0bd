// Internal to the CLI: value checks whose messages a user can act on. CLI11's own would let
// `--out --quick` write a file named "--quick", store `--seed -1` as 2^64 - 1, and print DBL_MAX
// in full for `--batch-size 0`. Example:
//   sub->add_option("--out", o->out, "Result file")->check(cli::not_a_flag());
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace tipbench::cli {

// Prints "error: MESSAGE" and returns exit 2.
int usage_error(const std::string& message);

// Bad flags or values: one `error:` line, exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A value that looks like a flag ("--quick") is a flag whose option lost its value.
CLI::Validator not_a_flag();

// A whole number in [min, max], written in decimal digits (no sign, no exponent, no fraction).
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);

// A seed: a whole number from 0 to 2^64 - 1.
CLI::Validator seed_value();

// A real number in [min, max], as parse_real reads it (decimal, finite): NaN and infinity are
// refused, which CLI::Range lets through ("nan" compares false with both ends). Every
// floating-point flag uses this one check.
CLI::Validator real_number(double min, double max);

// A duration: parts like 1h, 30m, 45s, 2.5m written together ("1h30m"), or a bare number of
// seconds ("900"); nullopt when the text is not one.
std::optional<double> parse_duration_s(const std::string& text);
// A duration in [min_s, max_s] seconds; the option receives the seconds.
CLI::Validator duration(double min_s, double max_s);

// A UTC time as results record them, or its leading part: 2026-11-20, 2026-11-20T03:00,
// 2026-11-20T03:00:00Z (each field in its range).
CLI::Validator utc_time();

// Fail fast: before any work, can the output named by `flag` be written? On a problem prints
// "error: --out PATH: cannot write there: REASON" and returns false (the caller exits 2).
bool output_file_writable(const std::string& flag, const std::string& path);
bool output_dir_writable(const std::string& flag, const std::string& dir);

}  // namespace tipbench::cli
