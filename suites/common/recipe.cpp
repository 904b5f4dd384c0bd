#include "recipe.h"

#include "tipbench/suite/registry.h"
#include "tipbench/results/result.h"

#include <algorithm>
#include <stdexcept>

namespace tipbench::suites {

namespace {

std::vector<Ingredient>& registry() {
  static std::vector<Ingredient> ingredients;
  return ingredients;
}

bool names(const Exclusion& exclusion, const Ingredient& other) {
  return exclusion.tip == other.tip || exclusion.tip == other.key();
}

}  // namespace

bool register_ingredient(Ingredient ingredient) {
  if (ingredient.tip.empty() || ingredient.arm.empty()) throw std::logic_error("an ingredient needs a tip and an arm");
  if (find_ingredient(ingredient.key())) throw std::logic_error("ingredient " + ingredient.key() + " declared twice");
  registry().push_back(std::move(ingredient));
  return true;
}

const std::vector<Ingredient>& all_ingredients() { return registry(); }

const Ingredient* find_ingredient(const std::string& key) {
  for (const auto& ingredient : registry()) {
    if (ingredient.key() == key) return &ingredient;
  }
  return nullptr;
}

std::optional<std::string> exclusion_between(const Ingredient& a, const Ingredient& b) {
  if (a.tip == b.tip) return a.key() + " and " + b.key() + " are two arms of one tip";
  for (const auto& e : a.excludes) {
    if (names(e, b)) return a.key() + " excludes " + b.key() + ": " + e.reason;
  }
  for (const auto& e : b.excludes) {
    if (names(e, a)) return b.key() + " excludes " + a.key() + ": " + e.reason;
  }
  return std::nullopt;
}

std::map<std::string, std::string> environment_of(const Ingredient& ingredient, const SuiteContext& context) {
  return ingredient.environment ? ingredient.environment(context) : std::map<std::string, std::string>{};
}

std::vector<const Ingredient*> parse_recipe(const std::string& text) {
  std::vector<const Ingredient*> out;
  std::string normal = text;
  std::replace(normal.begin(), normal.end(), '+', ',');
  std::replace(normal.begin(), normal.end(), '.', ':');
  std::size_t start = 0;
  while (start <= normal.size()) {
    const std::size_t end = std::min(normal.find(',', start), normal.size());
    const std::string key = normal.substr(start, end - start);
    start = end + 1;
    if (key.empty()) throw InputError("--recipe '" + text + "': an empty entry; write TIP:ARM,TIP:ARM");
    const Ingredient* ingredient = find_ingredient(key);
    if (!ingredient) {
      std::string known;
      for (const auto& i : all_ingredients()) known += (known.empty() ? "" : ", ") + i.key();
      throw InputError("--recipe: no tip declares the ingredient '" + key + "' (known: " + known + ")");
    }
    if (!ingredient->in_training_step()) {
      throw InputError("--recipe: " + key + " is not measured inside a training step: " + ingredient->outside_recipe);
    }
    for (const auto* earlier : out) {
      if (earlier == ingredient) throw InputError("--recipe: " + key + " is named twice");
      if (auto why = exclusion_between(*earlier, *ingredient)) throw InputError("--recipe: " + *why);
    }
    out.push_back(ingredient);
  }
  return out;
}

std::string recipe_level(const std::vector<const Ingredient*>& ingredients) {
  std::string out;
  for (const auto* i : ingredients) out += (out.empty() ? "" : "+") + i->tip + "." + i->arm;
  return out;
}

bool measures_alone(const Ingredient& ingredient, const Levels& case_params, const std::string& model) {
  const auto has = [&](const Levels::value_type& level) {
    return std::find(case_params.begin(), case_params.end(), level) != case_params.end();
  };
  return has({"model", model}) && std::all_of(ingredient.alone_case.begin(), ingredient.alone_case.end(), has);
}

AloneArm alone_arm(const Ingredient& ingredient, const SuiteContext& context, const std::string& model) {
  const Suite* suite = find_suite(ingredient.tip);
  if (!suite) return {.unavailable = "no suite named " + ingredient.tip + " is built in"};
  SuiteContext own = context;
  own.models = {model};
  for (const auto& c : suite->cases(own)) {
    if (!measures_alone(ingredient, c.params, model)) continue;
    for (const auto& arm : c.arms) {
      if (arm.name != ingredient.arm) continue;
      // The case's first arm is its baseline, PyTorch's default: on this device the tip is no change.
      if (&arm == &c.arms.front()) {
        return {.c = c,
                .arm = arm,
                .unavailable = ingredient.key() + " is PyTorch's default on " + own.device.str() +
                               ": the baseline already steps that way"};
      }
      return {.c = c, .arm = arm, .unavailable = suite->skip_reason(own, c, arm)};
    }
  }
  return {.unavailable = ingredient.tip + " plans no case that measures " + ingredient.arm + " alone on " + model};
}

}  // namespace tipbench::suites
