// Whole numbers read from JSON without nlohmann's silent conversions. get<int>() of a number
// stored as a double out of int's range (1e300, or 18446744073709551616, which does not fit an
// integer and is parsed as a double) is undefined behaviour, a float-to-integer cast out of
// range; of -1 into size_t or 2^40 into int a silent wrap; of true a 1. json_integer refuses
// each with std::out_of_range or std::invalid_argument naming the key, which the readers turn
// into InputError (exit 2). Whole doubles in range (32.0) are accepted, as before. Example:
//   t.block = tipbench::json_integer<int>(j, "block");        // j.at("block")
//   tipbench::json_get_to(j.at("seed"), settings.seed);       // checked when the field is an integer
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tipbench {

// `what` names the value in the message ("block": 1e+300 is not a whole number in [...]).
template <std::integral T, typename Json>
T json_integer_value(const Json& value, const std::string& what = "value") {
  static_assert(!std::same_as<T, bool>, "read booleans with get<bool>()");
  using limits = std::numeric_limits<T>;
  auto out_of_range = [&] {
    return std::out_of_range(what + ": " + value.dump() + " is not a whole number in [" +
                             std::to_string(limits::min()) + ", " + std::to_string(limits::max()) + "]");
  };
  if (value.is_number_unsigned()) {
    const auto v = value.template get<std::uint64_t>();
    if (!std::in_range<T>(v)) throw out_of_range();
    return static_cast<T>(v);
  }
  if (value.is_number_integer()) {
    const auto v = value.template get<std::int64_t>();
    if (!std::in_range<T>(v)) throw out_of_range();
    return static_cast<T>(v);
  }
  if (value.is_number_float()) {
    // T's range as doubles, both ends exact: min() is 0 or -2^k, and max() + 1 is 2^k.
    const double v = value.template get<double>();
    const double below = static_cast<double>(limits::min());
    const double above = 2.0 * static_cast<double>(limits::max() / 2 + 1);
    if (!(v == std::trunc(v) && v >= below && v < above)) throw out_of_range();
    return static_cast<T>(v);
  }
  throw std::invalid_argument(what + ": expected a whole number, found " + std::string(value.type_name()));
}

// object.at(key) as a T.
template <std::integral T, typename Json>
T json_integer(const Json& object, const char* key) {
  return json_integer_value<T>(object.at(key), std::string("\"") + key + "\"");
}

// object.at(key) as a time, count or size from a file from elsewhere: a finite number, not
// negative. `what` names the document's part in the error ("a breakdown's").
template <typename Json>
double json_amount(const Json& object, const char* key, const std::string& what) {
  const double v = object.at(key).template get<double>();
  if (!std::isfinite(v) || v < 0) throw std::invalid_argument(what + key + " is negative or not finite");
  return v;
}

// get_to, checked when the target is an integer (for code that visits fields of mixed types).
template <typename Json, typename T>
void json_get_to(const Json& value, T& out, const std::string& what = "value") {
  if constexpr (std::integral<T> && !std::same_as<T, bool>) {
    out = json_integer_value<T>(value, what);
  } else {
    value.get_to(out);
  }
}

// Whether `text` is valid UTF-8 (what a JSON string must be): no stray continuation byte, no
// truncated sequence, no overlong form, no surrogate, nothing above U+10FFFF.
inline bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    int extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(extra) >= text.size()) return false;  // truncated
    for (int k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      if ((next & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (next & 0x3F);
    }
    const std::uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if (cp < smallest[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

// The JSON pointer ("/suites/0/cases/1/...") of the first NaN or infinite number in `j`, which
// JSON cannot hold (nlohmann writes it as null, and a reader then refuses the document);
// nullopt when every number is finite. Writers check their document with it before writing.
template <typename Json>
std::optional<std::string> first_non_finite_number(const Json& j, const std::string& at = "") {
  if (j.is_number_float()) {
    const double v = j.template get<double>();
    if (!std::isfinite(v)) return at.empty() ? std::string("/") : at;
    return std::nullopt;
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (auto found = first_non_finite_number(it.value(), at + "/" + it.key())) return found;
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (auto found = first_non_finite_number(j[i], at + "/" + std::to_string(i))) return found;
    }
  }
  return std::nullopt;
}

// j.dump(indent) for a document about to be written to `what` (a file name): throws
// std::invalid_argument naming `what` and the place, instead of writing null for a NaN or an
// infinity, or failing with nlohmann's raw text on a string that is not UTF-8.
template <typename Json>
std::string checked_dump(const Json& j, int indent, const std::string& what) {
  if (const auto at = first_non_finite_number(j)) {
    throw std::invalid_argument(what + ": a number that is not finite at " + *at + " (JSON cannot hold it)");
  }
  try {
    return j.dump(indent);
  } catch (const nlohmann::json::type_error&) {  // 316: a string that is not UTF-8
    throw std::invalid_argument(what + ": a text that is not UTF-8 (JSON cannot hold it)");
  }
}

}  // namespace tipbench
