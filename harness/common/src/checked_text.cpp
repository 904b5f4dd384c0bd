#include "tipbench/common/checked_text.h"

#include "tipbench/common/error_text.h"

#include <algorithm>
#include <stdexcept>

namespace tipbench {

std::string short_sha(const std::string& sha) { return sha.empty() ? "-" : sha.substr(0, 12); }

bool is_git_sha(std::string_view text) {
  if (text.size() != 40 && text.size() != 64) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

void check_name(std::string_view field, std::string_view text) {
  if (has_control_character(text)) {
    throw std::invalid_argument(std::string(field) + " has a control character ('" + one_line(text.substr(0, 60)) +
                                "')");
  }
}

void check_git_sha(std::string_view field, std::string_view text) {
  if (!text.empty() && !is_git_sha(text)) {
    check_name(field, text);
    throw std::invalid_argument(std::string(field) + ": '" + abbreviated(text, 80) +
                                "' is not a git commit (40 or 64 lowercase hex digits)");
  }
}

}  // namespace tipbench
