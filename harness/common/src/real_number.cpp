#include "tipbench/common/real_number.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace tipbench {

namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Whether `text` is a decimal number as written by a person: sign, digits with an optional
// fraction, an optional exponent. from_chars alone would also take "inf", "nan" and hex.
bool decimal_syntax(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t mantissa_digits = 0;
  while (i < text.size() && digit(text[i])) ++i, ++mantissa_digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && digit(text[i])) ++i, ++mantissa_digits;
  }
  if (mantissa_digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    std::size_t exponent_digits = 0;
    while (i < text.size() && digit(text[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == text.size();
}

}  // namespace

std::optional<double> parse_real(std::string_view text) {
  if (!decimal_syntax(text)) return std::nullopt;
  const char* begin = text.data();
  if (*begin == '+') ++begin;  // from_chars takes no leading plus
  double x = 0;
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), x);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

}  // namespace tipbench
