#include "tipbench/common/error_text.h"

#include <regex>

namespace tipbench {

namespace {

std::string_view first_line(std::string_view text) {
  const auto end = text.find('\n');
  return end == std::string_view::npos ? text : text.substr(0, end);
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "/pytorch/caffe2/serialize/inline_container.cc:242" -> "inline_container.cc:242": the folders of
// the machine LibTorch was built on say nothing to a user (issue 48); the file and line still
// find the check in PyTorch's source. Only source files with a line number are shortened, never
// a path the user gave.
std::string without_build_folders(std::string text) {
  static const std::regex kSourcePlace(
      R"((?:/[A-Za-z0-9_.+-]+)+/([A-Za-z0-9_.+-]+\.(?:cc|cpp|cxx|cu|cuh|h|hpp):[0-9]+))");
  return std::regex_replace(text, kSourcePlace, "$1");
}

}  // namespace

std::string summarize_error_text(std::string_view text) {
  // TorchScript's messages start with a newline ("\nUnknown builtin op: ..."): skip blank lines.
  const auto start = text.find_first_not_of("\n\r \t");
  if (start == std::string_view::npos) return "";
  text.remove_prefix(start);
  std::string out = without_build_folders(std::string(trim_right(first_line(text))));
  constexpr std::string_view kRaised = "Exception raised from ";
  constexpr std::string_view kCallFirst = " (most recent call first):";
  const auto at = text.find(kRaised);
  if (at == std::string_view::npos || at == 0) return out;
  std::string_view where = trim_right(first_line(text.substr(at + kRaised.size())));
  if (where.ends_with(kCallFirst)) where.remove_suffix(kCallFirst.size());
  // c10 names the place inside the message's first line already ("[enforce fail at x.cpp:12]")
  // often enough; a second copy would only lengthen the line.
  const std::string place = without_build_folders(std::string(where));
  if (!place.empty() && out.find(place) == std::string::npos) out += " (raised from " + place + ")";
  return out;
}

std::string error_details(const std::exception& e) { return e.what(); }

std::string error_summary(const std::exception& e) {
  // what() of a c10::Error is message + backtrace; the same text a child process sends.
  return summarize_error_text(e.what());
}

std::string abbreviated(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  const std::size_t side = max / 2;
  return std::string(text.substr(0, side)) + "..." + std::string(text.substr(text.size() - side)) + " (" +
         std::to_string(text.size()) + " bytes)";
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace tipbench
