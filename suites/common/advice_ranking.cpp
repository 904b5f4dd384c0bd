#include "common/advice_ranking.h"

#include "common/recipe.h"

#include "tipbench/environment/run_conditions.h"
#include "tipbench/statistics/stats.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>

#include <algorithm>

namespace tipbench::suites {

namespace {

std::optional<Comparison> comparison(const CaseResult& c, const std::string& treatment, bool memory) {
  for (const auto& cmp : c.comparisons) {
    if (cmp.treatment != treatment) continue;
    if (memory ? cmp.metric.rfind("peak_", 0) == 0 : cmp.metric == kThroughputMetric) return cmp;
  }
  return std::nullopt;
}

std::string why_not_ok(const ArmResult& arm) {
  switch (arm.status) {
    case ArmStatus::ok: return "";
    case ArmStatus::skipped: return "skipped: " + arm.reason;
    case ArmStatus::failed: return "failed: " + arm.reason;
    case ArmStatus::invalid: return "invalid: " + arm.reason;
  }
  return arm.reason;
}

AdvisedTip rank_one(const Result& single, const Ingredient& ingredient, const std::string& model) {
  AdvisedTip r{.tip = ingredient.tip,
               .arm = ingredient.arm,
               .changes = ingredient.changes,
               .load_sensitive = ingredient.load_sensitive};
  const SuiteResult* suite = find_suite(single, ingredient.tip);
  if (!suite) {
    r.not_measured = "not in the single-tip results";
    return r;
  }
  for (const auto& c : suite->cases) {
    const ArmResult* arm = find_arm(c, ingredient.arm);
    if (!arm || !measures_alone(ingredient, c.params, model)) continue;
    r.case_name = c.name;
    for (const auto& a : c.arms) {
      if (a.baseline) r.baseline = a.arm;
    }
    r.not_measured = why_not_ok(*arm);
    // The optimizer's foreach on CUDA: PyTorch's default there, so the case's baseline itself.
    if (arm->baseline) {
      r.not_measured =
          fmt::format("{} is the baseline of {}: PyTorch's default there, nothing to turn on", ingredient.arm, c.name);
      return r;
    }
    r.throughput = comparison(c, ingredient.arm, false);
    r.memory = comparison(c, ingredient.arm, true);
    if (r.not_measured.empty() && !r.throughput) r.not_measured = "no comparison with the baseline (too few blocks)";
    r.winner = r.throughput && r.throughput->verdict == stats::Verdict::faster;
    if (r.winner) {
      // x28.0 [2.9, 37.0] on a loaded 2-core machine: significant, and no estimate of anything.
      const auto& e = r.throughput->estimate;
      if (e.ci_high - e.ci_low > e.ratio) {
        r.winner = false;
        r.left_out =
            fmt::format("too noisy to call a win: its 95% interval [{:.3f}, {:.3f}] is wider than the ratio itself",
                        e.ci_low, e.ci_high);
      }
    }
    return r;
  }
  r.not_measured = fmt::format("{} measured no case of {} alone on {}", ingredient.tip, ingredient.arm, model);
  return r;
}

std::string left_out_reason(const Ingredient& ingredient, const std::vector<const Ingredient*>& recipe,
                            const std::set<std::string>& excluded_changes) {
  if (!ingredient.in_training_step()) return "not part of the training step: " + ingredient.outside_recipe;
  for (const auto& change : ingredient.changes) {
    if (excluded_changes.contains(change)) return fmt::format("changes {}: left out by --exclude {}", change, change);
  }
  for (const auto* chosen : recipe) {
    if (auto why = exclusion_between(*chosen, ingredient)) return "cannot go with a better tip: " + *why;
  }
  return "";
}

// Whether a run was made with --quick (its recorded command line says so).
bool is_quick(const Result& run) {
  const auto& argv = run.context.argv;
  return std::find(argv.begin(), argv.end(), "--quick") != argv.end();
}

// The run's conditions of measurement as a line of the advice, and why they make it advice not to
// act on: a --quick run, or other processes' load beyond the bound the gate uses for two runs.
void note_run(Advice& advice, const std::string& which, const Result& run) {
  if (run.context.conditions.is_null()) {
    advice.conditions.push_back(which + " run: no conditions recorded (a result before schema 1.6)");
  } else {
    const RunConditions c = conditions_from_json(run.context.conditions);
    std::string line =
        fmt::format("{} run: other processes kept {:.0f}% of its {} CPUs busy, the hypervisor stole {:.0f}%", which,
                    100 * c.foreign_cpu.value_or(0), c.cpus, 100 * c.steal.value_or(0));
    if (c.load_average_start && c.load_average_end) {
      line += fmt::format(", load average {:.1f} to {:.1f}", *c.load_average_start, *c.load_average_end);
    }
    advice.conditions.push_back(line);
    if (shared_its_cpus(c)) {
      advice.not_to_keep.push_back(
          fmt::format("the {} run shared its CPUs with other work ({:.0f}% busy with other processes, {:.0f}% stolen): "
                      "measure on a quiet machine before acting on its ratios",
                      which, 100 * c.foreign_cpu.value_or(0), 100 * c.steal.value_or(0)));
    }
  }
  if (is_quick(run)) {
    advice.not_to_keep.push_back("the " + which + " run is --quick: a smoke run of few short trials");
  }
}

}  // namespace

Advice rank_tips(const Result& single, const std::string& model, const std::set<std::string>& excluded_changes) {
  Advice advice{.model = model, .device = single.context.device, .excluded_changes = excluded_changes};
  note_run(advice, "single-tip", single);
  for (const auto& ingredient : all_ingredients()) advice.ranked.push_back(rank_one(single, ingredient, model));
  const bool any =
      std::any_of(advice.ranked.begin(), advice.ranked.end(), [](const AdvisedTip& r) { return !r.case_name.empty(); });
  if (!any) throw InputError(fmt::format("the single-tip results hold no tip measured on {}", model));
  std::stable_sort(advice.ranked.begin(), advice.ranked.end(), [](const AdvisedTip& a, const AdvisedTip& b) {
    if (a.throughput.has_value() != b.throughput.has_value()) return a.throughput.has_value();
    return a.throughput && a.throughput->estimate.ratio > b.throughput->estimate.ratio;
  });
  std::vector<const Ingredient*> recipe;
  for (auto& tip : advice.ranked) {
    if (!tip.winner) continue;
    const Ingredient* ingredient = find_ingredient(tip.key());
    tip.left_out = left_out_reason(*ingredient, recipe, advice.excluded_changes);
    tip.in_recipe = tip.left_out.empty();
    if (tip.in_recipe) {
      recipe.push_back(ingredient);
      advice.recipe.push_back(tip.key());
    }
  }
  return advice;
}

void read_recipe(const Result& recipe_run, Advice& advice) {
  note_run(advice, "recipe", recipe_run);
  RecipeOutcome& out = advice.outcome;
  out = {};
  const SuiteResult* suite = find_suite(recipe_run, "recipe");
  const CaseResult* c = nullptr;
  if (suite) {
    const Levels::value_type model_level{"model", advice.model};
    for (const auto& candidate : suite->cases) {
      if (std::find(candidate.params.begin(), candidate.params.end(), model_level) != candidate.params.end()) {
        c = &candidate;
      }
    }
  }
  if (!c) {
    out.not_measured = "the recipe's result holds no case of " + advice.model;
    return;
  }
  out.case_name = c->name;
  const ArmResult* python_default = find_arm(*c, "python_default");
  const ArmResult* python_recipe = find_arm(*c, "python_recipe");
  if (python_default && python_recipe && python_default->status == ArmStatus::ok &&
      python_recipe->status == ArmStatus::ok) {
    out.python_combined =
        compare_arms(*python_recipe, *python_default, trial_throughput(), recipe_run.context.settings);
  }
  for (const auto& key : advice.recipe) {
    if (const Ingredient* ingredient = find_ingredient(key); ingredient && ingredient->python_only) {
      out.python_only.push_back(key);
    }
  }
  const ArmResult* recipe = find_arm(*c, "recipe");
  if (!recipe || recipe->status != ArmStatus::ok) {
    out.not_measured = recipe ? why_not_ok(*recipe) : "no recipe arm";
    return;
  }
  out.combined = comparison(*c, "recipe", false);
  out.memory = comparison(*c, "recipe", true);
  double product = 1;
  for (const auto& key : advice.recipe) {
    const AdvisedTip* tip = nullptr;
    for (const auto& ranked : advice.ranked) {
      if (ranked.key() == key) tip = &ranked;
    }
    // The C++ recipe leaves a Python-only tip out: its ratio is not in the product.
    if (std::find(out.python_only.begin(), out.python_only.end(), key) != out.python_only.end()) {
      out.worth.push_back(std::nullopt);
      continue;
    }
    if (tip->throughput) product *= tip->throughput->estimate.ratio;
    const ArmResult* without = find_arm(*c, "without_" + tip->tip);
    std::optional<Comparison> worth;
    if (without && without->status == ArmStatus::ok) {
      worth = compare_arms(*recipe, *without, trial_throughput(), recipe_run.context.settings);
    }
    out.worth.push_back(worth);
  }
  if (advice.recipe.size() > out.python_only.size()) out.product_of_singles = product;
}

}  // namespace tipbench::suites
