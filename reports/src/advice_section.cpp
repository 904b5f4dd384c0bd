#include "advice_section.h"

#include "tipbench/common/escape.h"
#include "tipbench/statistics/stats.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::reports::detail {

namespace {

std::string ratio_cell(const std::optional<Comparison>& c) {
  if (!c) return "-";
  return html_escape(comparison_words(*c));
}

std::string memory_cell(const std::optional<Comparison>& c) {
  return c ? fmt::format("x{:.3f}", c->estimate.ratio) : "-";
}

std::string recipe_cell(const AdvisedTip& tip) {
  std::string cell = html_escape(tip.not_measured);
  if (tip.in_recipe) cell = "<b>in</b>";
  if (!tip.in_recipe && !tip.left_out.empty()) cell = "left out: " + html_escape(tip.left_out);
  if (!tip.load_sensitive.empty() && tip.throughput)
    cell += " (depends on the load: " + html_escape(tip.load_sensitive) + ")";
  return cell;
}

std::string recipe_summary(const Advice& advice) {
  if (advice.recipe.empty()) return "<p>No tip beat PyTorch's default here: no recipe to measure.</p>\n";
  const auto& outcome = advice.outcome;
  std::string h =
      fmt::format("<p>The recipe <b>{}</b> ({}): ", html_escape(fmt::format("{}", fmt::join(advice.recipe, " + "))),
                  html_escape(outcome.case_name));
  if (!outcome.combined) return h + "not measured: " + html_escape(outcome.not_measured) + "</p>\n";
  h += ratio_cell(outcome.combined) + " against the default step";
  if (outcome.product_of_singles) {
    h += fmt::format("; the single ratios multiplied: x{:.3f}", *outcome.product_of_singles);
  }
  h += "; peak memory " + memory_cell(outcome.memory);
  if (outcome.python_combined) {
    h += "; in Python (the recipe's lines in the worker) " + ratio_cell(outcome.python_combined) +
         " against Python's default step";
  }
  return h + ".</p>\n";
}

}  // namespace

std::string advice_section(const Advice& advice) {
  std::string h = fmt::format("<h2>Advice: {} on {}</h2>\n", html_escape(advice.model), html_escape(advice.device));
  if (!advice.not_to_keep.empty()) {
    h += "<p class=warn><b>Not advice to keep:</b> " +
         html_escape(fmt::format("{}", fmt::join(advice.not_to_keep, "; "))) + ".</p>\n";
  }
  if (!advice.conditions.empty()) {
    h += "<p>Conditions of measurement: " + html_escape(fmt::format("{}", fmt::join(advice.conditions, "; "))) +
         ".</p>\n";
  }
  h += "<table><tr><th>#</th><th>tip</th><th>arm</th><th>throughput vs default [95% CI]</th><th>peak memory</th>"
       "<th>changes</th><th>recipe</th></tr>\n";
  int rank = 0;
  for (const auto& tip : advice.ranked) {
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", ++rank,
                     html_escape(tip.tip), html_escape(tip.arm), ratio_cell(tip.throughput), memory_cell(tip.memory),
                     html_escape(fmt::format("{}", fmt::join(tip.changes, ", "))), recipe_cell(tip));
  }
  h += "</table>\n" + recipe_summary(advice);
  if (advice.recipe.size() > 1) {
    h += "<table><tr><th>tip</th><th>worth inside the recipe (recipe vs recipe without it)</th></tr>\n";
    for (std::size_t i = 0; i < advice.recipe.size(); ++i) {
      const auto& worth = i < advice.outcome.worth.size() ? advice.outcome.worth[i] : std::nullopt;
      h += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", html_escape(advice.recipe[i]), ratio_cell(worth));
    }
    h += "</table>\n";
  }
  if (!advice.code.empty()) {
    h += "<p>The PyTorch lines that apply it (recipe.py):</p>\n<pre>" + html_escape(advice.code) + "</pre>\n";
  } else if (!advice.setup.empty()) {
    h += "<p>No line of recipe.py applies it: its tips are settings of the environment.</p>\n<ul>\n";
    for (const auto& note : advice.setup) h += "<li>" + html_escape(note) + "</li>\n";
    h += "</ul>\n";
  }
  return h;
}

}  // namespace tipbench::reports::detail
