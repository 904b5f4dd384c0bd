#include "tipbench/levels.h"

#include <stdexcept>

namespace tipbench {

std::string join_levels(const Levels& levels) {
  std::string out;
  for (const auto& [key, value] : levels) {
    if (!out.empty()) out += '/';
    out += key + ':' + value;
  }
  return out;
}

const std::string& level(const Levels& levels, const std::string& key) {
  for (const auto& [k, v] : levels) {
    if (k == key) return v;
  }
  throw std::out_of_range("no level '" + key + "' in {" + join_levels(levels) + "}");
}

}  // namespace tipbench
