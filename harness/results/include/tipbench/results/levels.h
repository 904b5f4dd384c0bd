// Ordered name=value pairs that identify a case (its parameters) or an arm (its factor levels).
// Names of cases and arms are derived from them, never typed by hand.
//   Levels p{{"model", "resnet50"}, {"batch", "64"}};  join_levels(p) == "model:resnet50/batch:64"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tipbench {

using Levels = std::vector<std::pair<std::string, std::string>>;

std::string join_levels(const Levels& levels);  // "k1:v1/k2:v2"
// The value for key; throws std::out_of_range naming the key and the keys present.
const std::string& level(const Levels& levels, const std::string& key);
// The value for key; nullopt when there is none (a level only some arms or cases have).
std::optional<std::string> find_level(const Levels& levels, const std::string& key);
// A level that is a number (a batch, a world size, a thread count, megabytes), read by one rule:
// the whole value is a finite decimal number ("64", "0.5", "1e-05" as fmt's {:g} writes it; not
// "64x", "", "0x40", "1e999" or "nan"), else std::invalid_argument naming the key and the value.
// level_int takes digits only (an optional minus sign), no fraction or exponent.
//   std::int64_t batch = level_int(c.params, "batch");
std::int64_t level_int(const Levels& levels, const std::string& key);
double level_number(const Levels& levels, const std::string& key);

}  // namespace tipbench
