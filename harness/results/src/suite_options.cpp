#include "tipbench/results/suite_options.h"

#include "tipbench/common/real_number.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

namespace tipbench {

std::string_view to_string(OptionType type) {
  switch (type) {
    case OptionType::flag: return "flag";
    case OptionType::text: return "text";
    case OptionType::number: return "number";
    case OptionType::choice: return "choice";
  }
  return "unknown";
}

std::string SuiteOption::text(const SuiteOptionValues& values) const {
  const auto it = values.find(name);
  return it == values.end() ? default_value : it->second;
}

bool SuiteOption::flag(const SuiteOptionValues& values) const {
  const std::string value = text(values);
  if (value == "true") return true;
  if (value == "false" || value.empty()) return false;
  throw std::invalid_argument(fmt::format("--{}: expected true or false, got '{}'", name, value));
}

double SuiteOption::number(const SuiteOptionValues& values) const {
  const std::string value = text(values);
  if (const auto why = problem(value); !why.empty()) throw std::invalid_argument(why);
  return *parse_real(value);
}

std::string SuiteOption::given_problem(const std::string& value) const {
  if (type == OptionType::text && check) return check(value);
  return problem(value);
}

std::string SuiteOption::problem(const std::string& value) const {
  if (type == OptionType::choice && std::find(choices.begin(), choices.end(), value) == choices.end()) {
    return fmt::format("--{}: '{}' is not one of {}", name, value, fmt::join(choices, ", "));
  }
  if (type == OptionType::text) return check && value != default_value ? check(value) : "";
  if (type != OptionType::number) return "";
  const auto x = parse_real(value);  // the CLI's one reading of a number: decimal, finite
  if (!x) return fmt::format("--{}: '{}' is not a number (decimal and finite)", name, value);
  if (*x < min || *x > max) return fmt::format("--{}: {} is outside [{:g}, {:g}]", name, value, min, max);
  return "";
}

}  // namespace tipbench
