#include "tipbench/reports/advice_report.h"

#include "tipbench/common/escape.h"
#include "tipbench/statistics/stats.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tipbench::reports {

namespace {

std::string ratio_text(const std::optional<Comparison>& c) {
  if (!c) return "-";
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}]", c->estimate.ratio, c->estimate.ci_low, c->estimate.ci_high);
}

std::string verdict_text(const std::optional<Comparison>& c) {
  if (!c) return "-";
  return std::string(stats::verdict_words(c->verdict)) + (c->noisy ? " (noisy)" : "");
}

std::string memory_text(const std::optional<Comparison>& c) {
  return c ? fmt::format("x{:.3f}", c->estimate.ratio) : "-";
}

std::string recipe_cell(const AdvisedTip& tip) {
  std::string cell = "-";
  if (tip.in_recipe) {
    cell = "**in**";
  } else if (!tip.left_out.empty()) {
    cell = "left out: " + markdown_escape(tip.left_out);
  } else if (!tip.not_measured.empty()) {
    cell = markdown_escape(tip.not_measured);
  }
  if (!tip.load_sensitive.empty() && tip.throughput) cell += " (depends on the load: " + tip.load_sensitive + ")";
  return cell;
}

// What the advice stands on: a warning first when it is not to act on, then each run's conditions.
std::string standing(const Advice& advice) {
  std::string md;
  if (!advice.not_to_keep.empty()) {
    md += fmt::format("> **Not advice to keep:** {}.\n\n", fmt::join(advice.not_to_keep, "; "));
  }
  if (!advice.conditions.empty()) {
    md += fmt::format("Conditions of measurement: {}.\n\n", fmt::join(advice.conditions, "; "));
  }
  return md;
}

std::string ranked_table(const Advice& advice) {
  std::string md = "| # | tip | arm | throughput [95% CI] | verdict | peak memory | changes | recipe |\n";
  md += "|---:|---|---|---|---|---:|---|---|\n";
  int rank = 0;
  for (const auto& tip : advice.ranked) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", ++rank, tip.tip, tip.arm,
                      ratio_text(tip.throughput), verdict_text(tip.throughput), memory_text(tip.memory),
                      tip.changes.empty() ? "-" : fmt::format("{}", fmt::join(tip.changes, ", ")), recipe_cell(tip));
  }
  md += "\nEach tip was measured alone on: ";
  std::vector<std::string> cases;
  for (const auto& tip : advice.ranked) {
    const std::string named = fmt::format("`{}` (vs `{}`)", tip.case_name, tip.baseline);
    if (!tip.case_name.empty() && std::find(cases.begin(), cases.end(), named) == cases.end()) cases.push_back(named);
  }
  return md + fmt::format("{}.\n\n", fmt::join(cases, ", "));
}

std::string recipe_findings(const Advice& advice) {
  const RecipeOutcome& outcome = advice.outcome;
  std::string md = fmt::format("`{}`, all at once in one training step (`{}`):\n\n", fmt::join(advice.recipe, " + "),
                               outcome.case_name);
  if (!outcome.combined) {
    md += fmt::format("- not measured: {}\n", outcome.not_measured.empty() ? "no comparison" : outcome.not_measured);
  } else {
    const auto& e = outcome.combined->estimate;
    md += fmt::format("- **{}** against the default step: {}\n", ratio_text(outcome.combined),
                      verdict_text(outcome.combined));
    if (outcome.product_of_singles && advice.recipe.size() - outcome.python_only.size() == 1) {
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
  if (!outcome.python_only.empty()) {
    md += fmt::format("- in tipbench's C++ step without {} (it exists only in Python)\n",
                      fmt::join(outcome.python_only, ", "));
  }
  if (outcome.python_combined) {
    md += fmt::format(
        "- **in Python** (the worker running the recipe's lines, as recipe.py holds them): **{}** against Python's "
        "default step: {}\n",
        ratio_text(outcome.python_combined), verdict_text(outcome.python_combined));
  }
  if (advice.recipe.size() > 1) {
    md += "\nWhat each tip is worth inside the recipe (leave-one-out: the recipe vs the recipe without it):\n\n";
    md += "| tip | worth [95% CI] | verdict |\n|---|---|---|\n";
    for (std::size_t i = 0; i < advice.recipe.size(); ++i) {
      const auto& worth = i < outcome.worth.size() ? outcome.worth[i] : std::nullopt;
      md += fmt::format("| {} | {} | {} |\n", advice.recipe[i], ratio_text(worth), verdict_text(worth));
    }
  }
  return md;
}

nlohmann::json comparison_json(const std::optional<Comparison>& c) {
  if (!c) return nullptr;
  return {{"ratio", c->estimate.ratio},
          {"ci_low", c->estimate.ci_low},
          {"ci_high", c->estimate.ci_high},
          {"verdict", std::string(stats::to_string(c->verdict))},
          {"noisy", c->noisy}};
}

}  // namespace

std::string advice_markdown(const Advice& advice, const AdviceFiles& files) {
  std::string md = fmt::format("# tipbench advise: {} on {}\n\n", advice.model, advice.device);
  md += standing(advice);
  md += fmt::format("Command: `{}`  \nSingle-tip results: `{}`", files.command, files.single);
  if (!files.recipe.empty()) md += fmt::format("; the recipe's: `{}`", files.recipe);
  md +=
      ".\n\nRatios are throughput (samples/s) against the case's baseline (PyTorch's default) with a 95% "
      "interval from the per-block ratios of interleaved blocks (a t-interval on their logarithms); a tip wins "
      "when the harness says `faster`.\n\n";
  md += "## The tips, ranked\n\n" + ranked_table(advice) + "## The recipe\n\n";
  if (advice.recipe.empty()) {
    return md + "No tip beat PyTorch's default here, so there is no recipe to measure: keep the defaults.\n";
  }
  md += recipe_findings(advice);
  md += fmt::format(
      "\n## The code\n\n`{}` is a plain PyTorch training script with the recipe applied (it runs as "
      "written: `python3 {} --device cpu`). ",
      files.script, files.script);
  if (advice.code.empty()) {
    // Every tip is a setting of the environment (an allocator through LD_PRELOAD, threads): no
    // line of the script applies it, and its header says how to run it.
    md += "No line of its code applies the recipe: its tips are settings of the environment, as its header says:\n\n";
    for (const auto& note : advice.setup) md += "- " + markdown_escape(note) + "\n";
    return md;
  }
  return md + "The lines that apply the tips:\n\n```python\n" + advice.code + "```\n";
}

nlohmann::json advice_json(const Advice& advice) {
  nlohmann::json ranked = nlohmann::json::array();
  for (const auto& tip : advice.ranked) {
    ranked.push_back({{"tip", tip.tip},
                      {"arm", tip.arm},
                      {"case", tip.case_name},
                      {"baseline", tip.baseline},
                      {"throughput", comparison_json(tip.throughput)},
                      {"memory", comparison_json(tip.memory)},
                      {"changes", tip.changes},
                      {"in_recipe", tip.in_recipe},
                      {"left_out", tip.left_out},
                      {"load_sensitive", tip.load_sensitive},
                      {"not_measured", tip.not_measured}});
  }
  const auto& outcome = advice.outcome;
  nlohmann::json worth = nlohmann::json::array();
  for (const auto& w : outcome.worth) worth.push_back(comparison_json(w));
  return {{"model", advice.model},
          {"device", advice.device},
          {"not_to_keep", advice.not_to_keep},
          {"conditions", advice.conditions},
          {"excluded_changes", advice.excluded_changes},
          {"ranked", ranked},
          {"recipe",
           {{"tips", advice.recipe},
            {"case", outcome.case_name},
            {"combined", comparison_json(outcome.combined)},
            {"product_of_singles", outcome.product_of_singles ? nlohmann::json(*outcome.product_of_singles) : nullptr},
            {"worth", worth},
            {"memory", comparison_json(outcome.memory)},
            {"python_combined", comparison_json(outcome.python_combined)},
            {"python_only", outcome.python_only},
            {"not_measured", outcome.not_measured}}},
          {"code", advice.code},
          {"setup", advice.setup}};
}

}  // namespace tipbench::reports
