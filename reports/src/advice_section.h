// Internal to the reports: the "Advice" section of an advise report (tipbench advise puts its
// advice.json into the page's model as model["advice"]): the ranked tips, the recipe's combined
// ratio beside the product of the single ratios, each tip's worth inside the recipe, and the code.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tipbench::reports::detail {

std::string advice_section(const nlohmann::json& advice);

}  // namespace tipbench::reports::detail
