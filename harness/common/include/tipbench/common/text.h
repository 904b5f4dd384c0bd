// Internal: small text helpers shared by the fingerprint's collection and its record.
#pragma once

#include <string>
#include <string_view>

namespace tipbench::detail {

std::string trim(std::string_view s);
// Runs of whitespace become one space ("Intel(R) Xeon(R)  CPU" -> "Intel(R) Xeon(R) CPU").
std::string squeeze_spaces(std::string_view s);
std::string to_lower(std::string s);
// A name safe as a file's stem: "zero_grad/model:small_cnn/arm:zero" ->
// "zero_grad.model-small_cnn.arm-zero" ('/' -> '.', ':' -> '-', any other unsafe byte -> '_').
std::string file_stem_of(std::string_view name);

}  // namespace tipbench::detail
