#include "tipbench/common/text.h"

#include <algorithm>
#include <cctype>

namespace tipbench::detail {

std::string trim(std::string_view s) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// Runs of whitespace become one space ("Intel(R) Xeon(R)  CPU" -> "Intel(R) Xeon(R) CPU").
std::string squeeze_spaces(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string to_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string file_stem_of(std::string_view name) {
  std::string out;
  for (char ch : name) {
    if (ch == '/')
      out += '.';
    else if (ch == ':')
      out += '-';
    else if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.')
      out += ch;
    else
      out += '_';
  }
  return out;
}

}  // namespace tipbench::detail
