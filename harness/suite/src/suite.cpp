#include "tipbench/suite/suite.h"

namespace tipbench {

std::string case_name(const std::string& suite, const CaseSpec& c) {
  return c.params.empty() ? suite : suite + "/" + join_levels(c.params);
}

std::string arm_name(const std::string& suite, const CaseSpec& c, const ArmSpec& arm) {
  return case_name(suite, c) + "/arm:" + arm.name;
}

}  // namespace tipbench
