// Internal to the reports: the "Advice" section of an advise report (render_html, given the
// advice): the ranked tips, the recipe's combined ratio beside the product of the single ratios,
// each tip's worth inside the recipe, and the code. advice.md is advice_report.cpp's.
#pragma once

#include "tipbench/results/advice.h"

#include <string>

namespace tipbench::reports::detail {

std::string advice_section(const Advice& advice);

}  // namespace tipbench::reports::detail
