// Internal to the CLI: what `tipbench advise` concludes. rank_tips reads the single-tip results of
// one model and ranks the tips that declare an Ingredient (suites/common/recipe.h) by their
// throughput ratio against PyTorch's default; the winners (faster, not left out by a label, able to
// go together) form the recipe. read_recipe reads the recipe suite's run of them. The Markdown and
// JSON of advice.md and the report's section come from both.
//   Advice advice = rank_tips(single, "small_cnn", {"numerics"});
//   RecipeOutcome outcome = read_recipe(recipe_run, advice);
#pragma once

#include "common/recipe.h"
#include "tipbench/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tipbench::cli {

struct RankedTip {
  const suites::Ingredient* ingredient = nullptr;
  std::string case_name;                 // the single-tip case it was judged on ("" when none was measured)
  std::string baseline;                  // that case's baseline arm
  std::optional<Comparison> throughput;  // the arm vs the baseline
  std::optional<Comparison> memory;      // peak memory, the arm vs the baseline
  std::string not_measured;              // why there is no ratio (skipped, failed, not run)
  bool winner = false;                   // faster, by the harness's verdict
  std::string left_out;                  // why a winner is not in the recipe ("" when it is)
};

struct Advice {
  std::string model;
  std::string device;
  std::vector<RankedTip> ranked;                  // by throughput ratio, highest first; unmeasured tips last
  std::vector<const suites::Ingredient*> recipe;  // the winners that go together, best first
  std::set<std::string> excluded_changes;         // labels the user left out (advise --exclude)
};

// Throws InputError when `single` has no result for the model.
Advice rank_tips(const Result& single, const std::string& model, const std::set<std::string>& excluded_changes);

struct RecipeOutcome {
  std::string case_name;
  std::optional<Comparison> combined;            // recipe vs default
  std::optional<double> product_of_singles;      // the recipe's tips' single ratios multiplied
  std::vector<std::optional<Comparison>> worth;  // per recipe tip: recipe vs recipe without it
  std::optional<Comparison> memory;              // peak memory, recipe vs default
  std::string not_measured;                      // why there is no combined ratio
};

RecipeOutcome read_recipe(const Result& recipe_run, const Advice& advice);

struct AdviceFiles {
  std::string command;  // the advise command line, as typed
  std::string single;   // the single-tip result file
  std::string recipe;   // the recipe's result file ("" when there was no recipe to run)
  std::string script;   // recipe.py
};

// `script`: recipe.py's text, whose marked lines the Markdown quotes.
std::string advice_markdown(const Advice& advice, const RecipeOutcome& outcome, const AdviceFiles& files,
                            const std::string& script);
// The report's "Advice" section reads this (reports/html_page: model["advice"]).
nlohmann::json advice_json(const Advice& advice, const RecipeOutcome& outcome, const std::string& script);

}  // namespace tipbench::cli
