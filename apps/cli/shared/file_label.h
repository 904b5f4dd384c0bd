// The label a run read from a file gets in compare's and report's tables: the file's name without
// its folder ("results/runs/a.json" -> "a.json").
#pragma once

#include <string>

namespace tipbench::cli {

inline std::string file_label(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace tipbench::cli
