// Internal to the models library: the enums of torch.export's serialization schema
// (torch/_export/serde/schema.py: ScalarType, MemoryFormat, Layout) as c10's.
#pragma once

#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tipbench::models {

// A whole number of the serialized program: a JSON integer within int64. Anything else (a float,
// an unsigned past int64) is refused, never converted: a double out of range converts with
// undefined behaviour.
inline std::int64_t serde_integer(const nlohmann::json& v) {
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    throw std::invalid_argument("a whole number past 64 bits: " + v.dump());
  if (!v.is_number_integer()) throw std::invalid_argument("not a whole number: " + v.dump().substr(0, 40));
  return v.get<std::int64_t>();
}

inline std::vector<std::int64_t> serde_integers(const nlohmann::json& list) {
  if (!list.is_array()) throw std::invalid_argument("not a list of whole numbers: " + list.dump().substr(0, 40));
  std::vector<std::int64_t> out;
  for (const auto& v : list) out.push_back(serde_integer(v));
  return out;
}

// An enum's number (ScalarType, MemoryFormat, Layout): a whole number within int.
inline int serde_enum(const nlohmann::json& v) {
  const auto n = serde_integer(v);
  if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max())
    throw std::invalid_argument("an enum's number out of range: " + v.dump());
  return static_cast<int>(n);
}

inline c10::ScalarType serde_scalar_type(int serialized) {
  switch (serialized) {
    case 1: return c10::kByte;
    case 2: return c10::kChar;
    case 3: return c10::kShort;
    case 4: return c10::kInt;
    case 5: return c10::kLong;
    case 6: return c10::kHalf;
    case 7: return c10::kFloat;
    case 8: return c10::kDouble;
    case 9: return c10::kComplexHalf;
    case 10: return c10::kComplexFloat;
    case 11: return c10::kComplexDouble;
    case 12: return c10::kBool;
    case 13: return c10::kBFloat16;
    case 14: return c10::kUInt16;
    case 15: return c10::ScalarType::Float8_e4m3fn;
    case 16: return c10::ScalarType::Float8_e5m2;
    case 17: return c10::ScalarType::Float8_e4m3fnuz;
    case 18: return c10::ScalarType::Float8_e5m2fnuz;
  }
  throw std::runtime_error("serialized dtype " + std::to_string(serialized) + ", which this reader does not know");
}

inline c10::MemoryFormat serde_memory_format(int serialized) {
  switch (serialized) {
    case 1: return c10::MemoryFormat::Contiguous;
    case 2: return c10::MemoryFormat::ChannelsLast;
    case 3: return c10::MemoryFormat::ChannelsLast3d;
    case 4: return c10::MemoryFormat::Preserve;
  }
  throw std::runtime_error("serialized memory format " + std::to_string(serialized) +
                           ", which this reader does not know");
}

inline c10::Layout serde_layout(int serialized) {
  if (serialized == 7) return c10::kStrided;
  throw std::runtime_error("layout " + std::to_string(serialized) +
                           " (sparse or mkldnn): tipbench trains strided tensors");
}

}  // namespace tipbench::models
