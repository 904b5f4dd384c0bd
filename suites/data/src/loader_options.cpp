#include "tipbench/data/loader_options.h"

#include <stdexcept>

namespace tipbench::data {

std::string to_string(CorruptPolicy policy) { return policy == CorruptPolicy::skip ? "skip" : "fail"; }

CorruptPolicy parse_corrupt_policy(const std::string& name) {
  if (name == "skip") return CorruptPolicy::skip;
  if (name == "fail") return CorruptPolicy::fail;
  throw std::invalid_argument("unknown corrupt-file policy '" + name + "'; valid: skip, fail");
}

}  // namespace tipbench::data
