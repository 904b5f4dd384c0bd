// What `tipbench advise` concludes from results (tipbench/results/advice.h): rank_tips reads the
// single-tip results of one model and ranks the tips that declare an Ingredient (recipe.h) by
// their throughput ratio against PyTorch's default; the winners (faster, not left out by a label,
// able to go together) form the recipe. read_recipe adds the recipe suite's run of them.
//   Advice advice = rank_tips(single, "small_cnn", {"numerics"});
//   read_recipe(recipe_run, advice);   // advice.outcome
#pragma once

#include "tipbench/results/advice.h"

#include <set>
#include <string>

namespace tipbench::suites {

// Throws InputError when `single` has no result for the model.
Advice rank_tips(const Result& single, const std::string& model, const std::set<std::string>& excluded_changes);

// Sets advice.outcome from the recipe suite's result.
void read_recipe(const Result& recipe_run, Advice& advice);

}  // namespace tipbench::suites
