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
#include <stdexcept>
#include <string>
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

// get_to, checked when the target is an integer (for code that visits fields of mixed types).
template <typename Json, typename T>
void json_get_to(const Json& value, T& out, const std::string& what = "value") {
  if constexpr (std::integral<T> && !std::same_as<T, bool>) {
    out = json_integer_value<T>(value, what);
  } else {
    value.get_to(out);
  }
}

}  // namespace tipbench
