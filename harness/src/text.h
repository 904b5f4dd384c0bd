// Internal: small text helpers shared by the fingerprint's collection and its record.
#pragma once

#include <string>
#include <string_view>

namespace tipbench::detail {

std::string trim(std::string_view s);
// Runs of whitespace become one space ("Intel(R) Xeon(R)  CPU" -> "Intel(R) Xeon(R) CPU").
std::string squeeze_spaces(std::string_view s);
std::string to_lower(std::string s);

}  // namespace tipbench::detail
