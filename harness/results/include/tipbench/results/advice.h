// What `tipbench advise` concludes, as data: ranked from results by suites/common/advice_ranking.h,
// rendered by reports/advice_report.h (advice.md, advice.json, report.html's "Advice" section).
//   Advice a = suites::rank_tips(single, "small_cnn", {});   // a.ranked, a.recipe
//   suites::read_recipe(recipe_run, a);                      // a.outcome
//   std::string md = reports::advice_markdown(a, files);
#pragma once

#include "tipbench/results/result.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tipbench {

// One tip, judged on its single-tip case against that case's baseline (PyTorch's default).
struct AdvisedTip {
  std::string tip;                       // its suite
  std::string arm;                       // the arm a recipe applies
  std::vector<std::string> changes;      // what else it changes: numerics, reproducibility
  std::string case_name;                 // the case it was judged on ("" when none was measured)
  std::string baseline;                  // that case's baseline arm
  std::optional<Comparison> throughput;  // the arm vs the baseline
  std::optional<Comparison> memory;      // peak memory, the arm vs the baseline
  std::string not_measured;              // why there is no ratio (skipped, failed, not run)
  bool winner = false;                   // faster, by the harness's verdict
  bool in_recipe = false;
  std::string left_out;        // why a (would-be) winner is not in the recipe ("" when it is)
  std::string load_sensitive;  // why its win depends on the machine's load ("" when it does not)
  std::string key() const { return tip + ":" + arm; }
};

// The recipe's own run: all its tips at once, and leave-one-out.
struct RecipeOutcome {
  std::string case_name;
  std::optional<Comparison> combined;            // recipe vs default
  std::optional<double> product_of_singles;      // the recipe's tips' single ratios multiplied
  std::vector<std::optional<Comparison>> worth;  // per recipe tip: recipe vs recipe without it
  std::optional<Comparison> memory;              // peak memory, recipe vs default
  std::string not_measured;                      // why there is no combined ratio
  // In the Python worker (advise --verify, or a recipe with a Python-only tip): python_recipe, the
  // recipe's Python lines as recipe.py holds them, against python_default, Python's default step.
  std::optional<Comparison> python_combined;
  std::vector<std::string> python_only;  // the recipe's tips only Python measured (compile)
};

struct Advice {
  std::string model;
  std::string device;
  std::vector<AdvisedTip> ranked;          // by throughput ratio, highest first; unmeasured tips last
  std::vector<std::string> recipe;         // the keys of the winners that go together, best first
  std::set<std::string> excluded_changes;  // labels the user left out (advise --exclude)
  RecipeOutcome outcome;                   // empty until the recipe is measured
  std::string code;                        // the lines of recipe.py that apply the recipe's tips
  // recipe.py's header notes of the recipe's tips ("allocator:jemalloc: start Python with
  // LD_PRELOAD ..."): how to apply a tip that changes no line of code (an environment setting).
  std::vector<std::string> setup;
  std::vector<std::string> conditions;   // each run's conditions of measurement, a line each
  std::vector<std::string> not_to_keep;  // why this advice is not to act on (a --quick run, a loaded machine)
};

}  // namespace tipbench
