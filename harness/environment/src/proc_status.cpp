#include "tipbench/environment/proc_status.h"

#include <fstream>
#include <string>

namespace tipbench {

std::int64_t proc_status_bytes(std::string_view field) {
  std::ifstream in("/proc/self/status");
  const std::string wanted = std::string(field) + ":";
  std::string key;
  while (in >> key) {
    if (key == wanted) {
      std::int64_t kb = -1;
      in >> kb;
      return kb < 0 ? -1 : kb * 1024;
    }
    std::string rest;
    std::getline(in, rest);
  }
  return -1;
}

}  // namespace tipbench
