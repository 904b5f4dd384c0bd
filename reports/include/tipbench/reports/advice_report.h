// The views of `tipbench advise`'s conclusion (tipbench/results/advice.h): advice.md, advice.json and
// report.html's "Advice" section (render_html, given the advice) all render one typed Advice.
//   std::string md = tipbench::reports::advice_markdown(advice, {.command = "tipbench advise", ...});
#pragma once

#include "tipbench/results/advice.h"

#include <nlohmann/json.hpp>

#include <string>

namespace tipbench::reports {

struct AdviceFiles {
  std::string command;  // the advise command line, as typed
  std::string single;   // the single-tip result file
  std::string recipe;   // the recipe's result file ("" when there was no recipe to run)
  std::string script;   // recipe.py
};

std::string advice_markdown(const Advice& advice, const AdviceFiles& files);
nlohmann::json advice_json(const Advice& advice);

}  // namespace tipbench::reports
