// The one reading of a real number the CLI accepts, for every floating-point flag and every suite
// option of type number: decimal text, written whole, finite. "nan", "inf" and "1e400" (which
// overflows to infinity) are refused: NaN compares false with everything, so a range check alone
// would let it through, and JSON cannot hold either. Hexadecimal ("0x10") is refused too: it is
// not what anyone means by a threshold. Example:
//   if (auto x = tipbench::parse_real("2.5")) use(*x);   // nullopt for "nan", "1e400", "0x10", "2.5%"
#pragma once

#include <optional>
#include <string_view>

namespace tipbench {

// [+-]?digits[.digits][(e|E)[+-]?digits] (or .digits), finite once read; nullopt otherwise.
std::optional<double> parse_real(std::string_view text);

}  // namespace tipbench
