#include "tipbench/machine/environment.h"

#include "gpu_checks.h"
#include "host_checks.h"

namespace tipbench {

std::vector<std::string> environment_warnings(bool check_gpus_too) {
  std::vector<std::string> warnings;
  check_host(warnings);
  if (check_gpus_too) check_gpus(warnings);
  return warnings;
}

}  // namespace tipbench
