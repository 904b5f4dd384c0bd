#include "advice.h"

#include "tipbench/gate/cells.h"
#include "tipbench/stats.h"
#include "tipbench/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace tipbench::cli {

namespace {

std::optional<Comparison> comparison(const CaseResult& c, const std::string& treatment, bool memory) {
  for (const auto& cmp : c.comparisons) {
    if (cmp.treatment != treatment) continue;
    if (memory ? cmp.metric.rfind("peak_", 0) == 0 : cmp.metric == gate::kThroughput) return cmp;
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

RankedTip rank_one(const Result& single, const suites::Ingredient& ingredient, const std::string& model) {
  RankedTip r{.ingredient = &ingredient};
  const SuiteResult* suite = find_suite(single, ingredient.tip);
  if (!suite) {
    r.not_measured = "not in the single-tip results";
    return r;
  }
  for (const auto& c : suite->cases) {
    const ArmResult* arm = find_arm(c, ingredient.arm);
    if (!arm || !suites::measures_alone(ingredient, c.params, model)) continue;
    r.case_name = c.name;
    for (const auto& a : c.arms) {
      if (a.baseline) r.baseline = a.arm;
    }
    r.not_measured = why_not_ok(*arm);
    r.throughput = comparison(c, ingredient.arm, false);
    r.memory = comparison(c, ingredient.arm, true);
    if (r.not_measured.empty() && !r.throughput) r.not_measured = "no comparison with the baseline (too few blocks)";
    r.winner = r.throughput && r.throughput->verdict == stats::Verdict::faster;
    return r;
  }
  r.not_measured = fmt::format("{} measured no case of {} alone on {}", ingredient.tip, ingredient.arm, model);
  return r;
}

std::string left_out_reason(const RankedTip& tip, const Advice& advice) {
  const auto& ingredient = *tip.ingredient;
  if (!ingredient.in_training_step()) return "not part of the training step: " + ingredient.outside_recipe;
  for (const auto& change : ingredient.changes) {
    if (advice.excluded_changes.contains(change))
      return fmt::format("changes {}: left out by --exclude {}", change, change);
  }
  for (const auto* chosen : advice.recipe) {
    if (auto why = suites::exclusion_between(*chosen, ingredient)) return "cannot go with a better tip: " + *why;
  }
  return "";
}

std::string ratio_text(const std::optional<Comparison>& c) {
  if (!c) return "-";
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}]", c->estimate.ratio, c->estimate.ci_low, c->estimate.ci_high);
}

std::string verdict_text(const std::optional<Comparison>& c) {
  if (!c) return "-";
  return std::string(stats::to_string(c->verdict)) + (c->noisy ? " (noisy)" : "");
}

std::string memory_text(const std::optional<Comparison>& c) {
  return c ? fmt::format("x{:.3f}", c->estimate.ratio) : "-";
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

nlohmann::json comparison_json(const std::optional<Comparison>& c) {
  if (!c) return nullptr;
  return {{"ratio", c->estimate.ratio},
          {"ci_low", c->estimate.ci_low},
          {"ci_high", c->estimate.ci_high},
          {"verdict", std::string(stats::to_string(c->verdict))},
          {"noisy", c->noisy}};
}

// The tips a script line is marked with: "code  # amp:bf16, tf32" -> {"amp:bf16", "tf32"}
// (recipe_script.cpp writes the marks so); none for a line without a trailing mark.
std::vector<std::string> marks_of_line(const std::string& line) {
  const std::string lead = "  # ";
  const auto at = line.rfind(lead);
  if (at == std::string::npos) return {};
  std::vector<std::string> marks;
  std::istringstream list(line.substr(at + lead.size()));
  std::string mark;
  while (std::getline(list, mark, ',')) {
    const auto first = mark.find_first_not_of(' ');
    if (first != std::string::npos) marks.push_back(mark.substr(first));
  }
  return marks;
}

// The lines of the script that a tip of the recipe contributed: whole marks, so that
// cpu_threads:t1 never claims a line of cpu_threads:t16.
std::string marked_lines(const std::string& script, const std::vector<const suites::Ingredient*>& recipe) {
  std::istringstream in(script);
  std::string line, out;
  while (std::getline(in, line)) {
    const auto marks = marks_of_line(line);
    const bool ours = std::any_of(recipe.begin(), recipe.end(), [&](const suites::Ingredient* ingredient) {
      return std::find(marks.begin(), marks.end(), ingredient->key()) != marks.end();
    });
    if (ours) out += line + "\n";
  }
  return out;
}

}  // namespace

Advice rank_tips(const Result& single, const std::string& model, const std::set<std::string>& excluded_changes) {
  Advice advice{.model = model, .device = single.context.device, .excluded_changes = excluded_changes};
  for (const auto& ingredient : suites::all_ingredients()) advice.ranked.push_back(rank_one(single, ingredient, model));
  const bool any =
      std::any_of(advice.ranked.begin(), advice.ranked.end(), [](const RankedTip& r) { return !r.case_name.empty(); });
  if (!any) throw InputError(fmt::format("the single-tip results hold no tip measured on {}", model));
  std::stable_sort(advice.ranked.begin(), advice.ranked.end(), [](const RankedTip& a, const RankedTip& b) {
    if (a.throughput.has_value() != b.throughput.has_value()) return a.throughput.has_value();
    return a.throughput && a.throughput->estimate.ratio > b.throughput->estimate.ratio;
  });
  for (auto& tip : advice.ranked) {
    if (!tip.winner) continue;
    tip.left_out = left_out_reason(tip, advice);
    if (tip.left_out.empty()) advice.recipe.push_back(tip.ingredient);
  }
  return advice;
}

RecipeOutcome read_recipe(const Result& recipe_run, const Advice& advice) {
  RecipeOutcome out;
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
    return out;
  }
  out.case_name = c->name;
  const ArmResult* recipe = find_arm(*c, "recipe");
  if (!recipe || recipe->status != ArmStatus::ok) {
    out.not_measured = recipe ? why_not_ok(*recipe) : "no recipe arm";
    return out;
  }
  out.combined = comparison(*c, "recipe", false);
  out.memory = comparison(*c, "recipe", true);
  double product = 1;
  for (const auto* ingredient : advice.recipe) {
    for (const auto& tip : advice.ranked) {
      if (tip.ingredient == ingredient && tip.throughput) product *= tip.throughput->estimate.ratio;
    }
    const ArmResult* without = find_arm(*c, "without_" + ingredient->tip);
    std::optional<Comparison> worth;
    if (without && without->status == ArmStatus::ok) {
      worth = compare_arms(*recipe, *without, trial_throughput(), recipe_run.context.settings);
    }
    out.worth.push_back(worth);
  }
  out.product_of_singles = product;
  return out;
}

std::string advice_markdown(const Advice& advice, const RecipeOutcome& outcome, const AdviceFiles& files,
                            const std::string& script) {
  std::string md = fmt::format("# tipbench advise: {} on {}\n\n", advice.model, advice.device);
  md += fmt::format("Command: `{}`  \nSingle-tip results: `{}`", files.command, files.single);
  if (!files.recipe.empty()) md += fmt::format("; the recipe's: `{}`", files.recipe);
  md +=
      ".\n\nRatios are throughput (samples/s) against the case's baseline (PyTorch's default) with the paired "
      "bootstrap 95% interval over interleaved blocks; a tip wins when the harness says `faster`.\n\n";
  md += "## The tips, ranked\n\n";
  md += "| # | tip | arm | throughput [95% CI] | verdict | peak memory | changes | recipe |\n";
  md += "|---:|---|---|---|---|---:|---|---|\n";
  int rank = 0;
  for (const auto& tip : advice.ranked) {
    const auto& ingredient = *tip.ingredient;
    std::string recipe = "-";
    if (std::find(advice.recipe.begin(), advice.recipe.end(), tip.ingredient) != advice.recipe.end())
      recipe = "**in**";
    else if (!tip.left_out.empty())
      recipe = "left out: " + tip.left_out;
    else if (!tip.not_measured.empty())
      recipe = tip.not_measured;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", ++rank, ingredient.tip, ingredient.arm,
                      ratio_text(tip.throughput), verdict_text(tip.throughput), memory_text(tip.memory),
                      ingredient.changes.empty() ? "-" : join(ingredient.changes, ", "), recipe);
  }
  md += "\nEach tip was measured alone on: ";
  std::vector<std::string> cases;
  for (const auto& tip : advice.ranked) {
    const std::string named = fmt::format("`{}` (vs `{}`)", tip.case_name, tip.baseline);
    if (!tip.case_name.empty() && std::find(cases.begin(), cases.end(), named) == cases.end()) cases.push_back(named);
  }
  md += join(cases, ", ") + ".\n\n## The recipe\n\n";
  if (advice.recipe.empty()) {
    md += "No tip beat PyTorch's default here, so there is no recipe to measure: keep the defaults.\n";
    return md;
  }
  std::vector<std::string> keys;
  for (const auto* i : advice.recipe) keys.push_back(i->key());
  md += fmt::format("`{}`, all at once in one training step (`{}`):\n\n", join(keys, " + "), outcome.case_name);
  if (!outcome.combined) {
    md += fmt::format("- not measured: {}\n", outcome.not_measured.empty() ? "no comparison" : outcome.not_measured);
  } else {
    const auto& e = outcome.combined->estimate;
    md += fmt::format("- **{}** against the default step: {}\n", ratio_text(outcome.combined),
                      verdict_text(outcome.combined));
    if (outcome.product_of_singles && advice.recipe.size() == 1) {
      md += fmt::format(
          "- alone, in the single-tip run: x{:.3f} (two measurements of one change: they differ by "
          "the noise of each)\n",
          *outcome.product_of_singles);
    } else if (outcome.product_of_singles) {
      const double p = *outcome.product_of_singles;
      const bool inside = p >= e.ci_low && p <= e.ci_high;
      md += fmt::format("- the single tips' ratios multiplied: x{:.3f}, {} the recipe's interval: {}\n", p,
                        inside ? "inside" : "outside", inside ? "they compose" : "they do not simply compose");
    }
    md += fmt::format("- peak memory: {} of the default's\n", memory_text(outcome.memory));
  }
  if (advice.recipe.size() > 1) {
    md += "\nWhat each tip is worth inside the recipe (leave-one-out: the recipe vs the recipe without it):\n\n";
    md += "| tip | worth [95% CI] | verdict |\n|---|---|---|\n";
    for (std::size_t i = 0; i < advice.recipe.size(); ++i) {
      const auto& worth = i < outcome.worth.size() ? outcome.worth[i] : std::nullopt;
      md += fmt::format("| {} | {} | {} |\n", advice.recipe[i]->key(), ratio_text(worth), verdict_text(worth));
    }
  }
  md += fmt::format(
      "\n## The code\n\n`{}` is a plain PyTorch training script with the recipe applied (it runs as "
      "written: `python3 {} --device cpu`). The lines that apply the tips:\n\n",
      files.script, files.script);
  return md + "```python\n" + marked_lines(script, advice.recipe) + "```\n";
}

nlohmann::json advice_json(const Advice& advice, const RecipeOutcome& outcome, const std::string& script) {
  nlohmann::json ranked = nlohmann::json::array();
  for (const auto& tip : advice.ranked) {
    const bool in = std::find(advice.recipe.begin(), advice.recipe.end(), tip.ingredient) != advice.recipe.end();
    ranked.push_back({{"tip", tip.ingredient->tip},
                      {"arm", tip.ingredient->arm},
                      {"case", tip.case_name},
                      {"baseline", tip.baseline},
                      {"throughput", comparison_json(tip.throughput)},
                      {"memory", comparison_json(tip.memory)},
                      {"changes", tip.ingredient->changes},
                      {"in_recipe", in},
                      {"left_out", tip.left_out},
                      {"not_measured", tip.not_measured}});
  }
  nlohmann::json tips = nlohmann::json::array();
  for (const auto* i : advice.recipe) tips.push_back(i->key());
  nlohmann::json worth = nlohmann::json::array();
  for (const auto& w : outcome.worth) worth.push_back(comparison_json(w));
  return {{"model", advice.model},
          {"device", advice.device},
          {"excluded_changes", advice.excluded_changes},
          {"ranked", ranked},
          {"recipe",
           {{"tips", tips},
            {"case", outcome.case_name},
            {"combined", comparison_json(outcome.combined)},
            {"product_of_singles", outcome.product_of_singles ? nlohmann::json(*outcome.product_of_singles) : nullptr},
            {"worth", worth},
            {"memory", comparison_json(outcome.memory)},
            {"not_measured", outcome.not_measured}}},
          {"code", marked_lines(script, advice.recipe)}};
}

}  // namespace tipbench::cli
