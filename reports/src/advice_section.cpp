#include "advice_section.h"

#include "tipbench/escape.h"

#include <fmt/format.h>

namespace tipbench::reports::detail {

namespace {

std::string ratio_cell(const nlohmann::json& c) {
  if (c.is_null()) return "-";
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}] {}{}", c.at("ratio").get<double>(), c.at("ci_low").get<double>(),
                     c.at("ci_high").get<double>(), html_escape(c.at("verdict").get<std::string>()),
                     c.value("noisy", false) ? " [noisy]" : "");
}

std::string memory_cell(const nlohmann::json& c) {
  return c.is_null() ? "-" : fmt::format("x{:.3f}", c.at("ratio").get<double>());
}

std::string recipe_cell(const nlohmann::json& tip) {
  if (tip.value("in_recipe", false)) return "<b>in</b>";
  if (const auto why = tip.value("left_out", ""); !why.empty()) return "left out: " + html_escape(why);
  return html_escape(tip.value("not_measured", ""));
}

std::string recipe_summary(const nlohmann::json& recipe) {
  std::string tips;
  for (const auto& t : recipe.at("tips")) tips += (tips.empty() ? "" : " + ") + t.get<std::string>();
  if (tips.empty()) return "<p>No tip beat PyTorch's default here: no recipe to measure.</p>\n";
  std::string h =
      fmt::format("<p>The recipe <b>{}</b> ({}): ", html_escape(tips), html_escape(recipe.value("case", "")));
  const auto& combined = recipe.at("combined");
  if (combined.is_null()) return h + "not measured: " + html_escape(recipe.value("not_measured", "")) + "</p>\n";
  h += ratio_cell(combined) + " against the default step";
  if (!recipe.at("product_of_singles").is_null()) {
    h += fmt::format("; the single ratios multiplied: x{:.3f}", recipe.at("product_of_singles").get<double>());
  }
  return h + "; peak memory " + memory_cell(recipe.at("memory")) + ".</p>\n";
}

}  // namespace

std::string advice_section(const nlohmann::json& advice) {
  std::string h = fmt::format("<h2>Advice: {} on {}</h2>\n", html_escape(advice.value("model", "")),
                              html_escape(advice.value("device", "")));
  h += "<table><tr><th>#</th><th>tip</th><th>arm</th><th>throughput vs default [95% CI]</th><th>peak memory</th>"
       "<th>changes</th><th>recipe</th></tr>\n";
  int rank = 0;
  for (const auto& tip : advice.at("ranked")) {
    std::string changes;
    for (const auto& c : tip.at("changes")) changes += (changes.empty() ? "" : ", ") + c.get<std::string>();
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", ++rank,
                     html_escape(tip.value("tip", "")), html_escape(tip.value("arm", "")),
                     ratio_cell(tip.at("throughput")), memory_cell(tip.at("memory")), html_escape(changes),
                     recipe_cell(tip));
  }
  h += "</table>\n" + recipe_summary(advice.at("recipe"));
  const auto& recipe = advice.at("recipe");
  if (recipe.at("tips").size() > 1) {
    h += "<table><tr><th>tip</th><th>worth inside the recipe (recipe vs recipe without it)</th></tr>\n";
    for (std::size_t i = 0; i < recipe.at("tips").size(); ++i) {
      const auto& worth = i < recipe.at("worth").size() ? recipe.at("worth")[i] : nlohmann::json();
      h += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", html_escape(recipe.at("tips")[i].get<std::string>()),
                       ratio_cell(worth));
    }
    h += "</table>\n";
  }
  if (const auto code = advice.value("code", ""); !code.empty()) {
    h += "<p>The PyTorch lines that apply it (recipe.py):</p>\n<pre>" + html_escape(code) + "</pre>\n";
  }
  return h;
}

}  // namespace tipbench::reports::detail
