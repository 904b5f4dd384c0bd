// The recipe: several tips at once in one training step, against PyTorch's default step, and the
// recipe without each tip in turn (leave-one-out), which shows what each tip is worth inside the
// recipe. Tips do not simply add up (AMP changes what channels_last is worth), so the combination
// is measured, interleaved like any case. The tips come from --recipe TIP:ARM,... (`tipbench
// advise` picks the winners of the single-tip suites); what an arm changes, and which tips cannot
// go together, each tip declares in its own file (common/recipe.h).
#include "common/python_step.h"
#include "common/recipe.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace tipbench::suites {

namespace {

const std::vector<const Ingredient*>& recipe_named(const std::string& text);

const SuiteOption kRecipeOption{
    .name = "recipe",
    .type = OptionType::text,
    .default_value = "",
    .help =
        "the tips to combine in one training step: TIP:ARM,... (tipbench list --ingredients; tipbench advise "
        "chooses them from single-tip results)",
    .check = [](const std::string& text) -> std::string {
      if (text.empty()) return "--recipe: an empty recipe; name the tips as TIP:ARM,... (tipbench list --ingredients)";
      try {
        (void)recipe_named(text);
      } catch (const InputError& e) {
        return std::string("--recipe: ") + e.what();
      }
      return "";
    }};

// The recipe a text names, parsed once per text: cases, isolation, skip reasons and every arm's
// trial ask for it again. A text that does not parse throws InputError and is not kept.
const std::vector<const Ingredient*>& recipe_named(const std::string& text) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<const Ingredient*>> parsed;  // nodes never move nor go
  std::lock_guard lock(mutex);
  auto it = parsed.find(text);
  if (it == parsed.end()) it = parsed.emplace(text, parse_recipe(text)).first;
  return it->second;
}

const SuiteOption kRecipePythonOption{
    .name = "recipe-python",
    .type = OptionType::flag,
    .default_value = "false",
    .help =
        "also measure the recipe in the Python worker: python_recipe (the recipe's Python lines, as recipe.py "
        "holds them) against python_default; always on when the recipe holds a Python-only tip (compile)"};

constexpr const char* kWithoutPrefix = "without_";
constexpr const char* kPythonDefault = "python_default";
constexpr const char* kPythonRecipe = "python_recipe";
constexpr const char* kNoRecipe = "none";  // the case level of a run without --recipe (skipped)

// The recipe of the run's option; an empty one when it names none or does not parse (prepare_run
// refuses that with the reason before anything is measured).
std::vector<const Ingredient*> recipe_of(const SuiteContext& context) {
  try {
    const std::string text = kRecipeOption.text(context.options);
    return text.empty() ? std::vector<const Ingredient*>{} : recipe_named(text);
  } catch (const InputError&) {
    return {};
  }
}

bool python_arm(const ArmSpec& arm) { return arm.name == kPythonDefault || arm.name == kPythonRecipe; }

// The ingredients an arm applies: all of the case's recipe but the one a leave-one-out arm leaves
// out; a C++ arm leaves out the Python-only ones, which it cannot apply.
std::vector<const Ingredient*> applied_by(const CaseSpec& c, const ArmSpec& arm) {
  if (arm.name == "default" || arm.name == kPythonDefault || level(c.params, "recipe") == kNoRecipe) return {};
  std::vector<const Ingredient*> out;
  for (const auto* ingredient : recipe_named(level(c.params, "recipe"))) {
    if (ingredient->python_only && !python_arm(arm)) continue;
    if (arm.name != kWithoutPrefix + ingredient->tip) out.push_back(ingredient);
  }
  return out;
}

// The recipe's Python lines for the worker (python_step.h's PythonRecipe): what recipe.py holds.
PythonRecipe python_recipe_of(const std::vector<const Ingredient*>& ingredients) {
  PythonRecipe out;
  PythonLines& lines = out.lines;
  for (const auto* i : ingredients) {
    const auto& p = i->python;
    lines.setup.insert(lines.setup.end(), p.setup.begin(), p.setup.end());
    lines.model.insert(lines.model.end(), p.model.begin(), p.model.end());
    lines.optimizer_kwargs.insert(lines.optimizer_kwargs.end(), p.optimizer_kwargs.begin(), p.optimizer_kwargs.end());
    lines.batch.insert(lines.batch.end(), p.batch.begin(), p.batch.end());
    if (!p.autocast_dtype.empty()) lines.autocast_dtype = p.autocast_dtype;
    lines.grad_scaler = lines.grad_scaler || p.grad_scaler;
    out.ingredients.push_back(i->key());
    // A tip whose Python is only a comment (CUDA graphs) is not in the worker's step.
    if (p.setup.empty() && p.model.empty() && p.optimizer_kwargs.empty() && p.batch.empty() &&
        p.autocast_dtype.empty() && !p.grad_scaler && !i->environment) {
      out.not_applied.push_back(i->key());
    }
  }
  return out;
}

bool with_python_arms(const SuiteContext& context, const std::vector<const Ingredient*>& recipe) {
  return kRecipePythonOption.flag(context.options) ||
         std::any_of(recipe.begin(), recipe.end(), [](const Ingredient* i) { return i->python_only; });
}

// One restore that undoes the ingredients' process-wide settings, the last applied first.
Restore in_reverse(std::vector<Restore> restores) {
  return [restores = std::move(restores)] {
    for (auto it = restores.rbegin(); it != restores.rend(); ++it) {
      if (*it) (*it)();
    }
  };
}

}  // namespace

class Recipe final : public Suite {
 public:
  std::string name() const override { return "recipe"; }
  std::string description() const override {
    return "several tips at once in one training step (--recipe; tipbench advise chooses them) vs PyTorch's "
           "default, and the recipe without each tip (leave-one-out)";
  }
  std::vector<SuiteOption> options() const override {
    return {kRecipeOption, kRecipePythonOption, kPythonTimeoutOption};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    const auto recipe = recipe_of(context);
    const std::string named = recipe.empty() ? kNoRecipe : recipe_level(recipe);
    std::vector<ArmSpec> arms{{"default", {{"tips", "none"}}}, {"recipe", {{"tips", "all"}}}};
    const auto in_cpp =
        std::count_if(recipe.begin(), recipe.end(), [](const Ingredient* i) { return !i->python_only; });
    if (in_cpp > 1) {
      for (const auto* ingredient : recipe) {
        if (!ingredient->python_only)
          arms.push_back({kWithoutPrefix + ingredient->tip, {{"without", ingredient->key()}}});
      }
    }
    if (with_python_arms(context, recipe)) {
      arms.push_back({kPythonDefault, {{"tips", "none"}, {"step", "python"}}});
      arms.push_back({kPythonRecipe, {{"tips", "all"}, {"step", "python"}}});
    }
    return training_cases(context, arms, {{"recipe", {named}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    if (level(c.params, "recipe") == kNoRecipe) {
      return "no recipe: name the tips with --recipe TIP:ARM,... or let `tipbench advise` choose them";
    }
    if (arm.name == "recipe" && applied_by(c, arm).empty()) {
      return "every tip of this recipe exists only in Python: python_recipe measures it, against python_default";
    }
    // Whether a tip runs here is its suite's answer for its full plan (--quick leaves arms out).
    SuiteContext full = context;
    full.quick = false;
    for (const auto* ingredient : recipe_named(level(c.params, "recipe"))) {
      if (auto why = alone_arm(*ingredient, full, level(c.params, "model")).unavailable) {
        return ingredient->key() + " cannot run here: " + *why;
      }
    }
    return std::nullopt;
  }
  Isolation isolation(const SuiteContext& context) const override {
    const auto recipe = recipe_of(context);
    const bool fresh = std::any_of(recipe.begin(), recipe.end(), [&](const Ingredient* i) {
      return i->sticky || !environment_of(*i, context).empty();
    });
    return fresh ? Isolation::fresh_process : Isolation::in_process;
  }
  std::map<std::string, std::string> trial_environment(const SuiteContext& context, const CaseSpec& c,
                                                       const ArmSpec& arm) const override {
    std::map<std::string, std::string> out;
    for (const auto* ingredient : applied_by(c, arm)) out.merge(environment_of(*ingredient, context));
    return out;
  }
  void prepare_run(const SuiteContext& context) const override {
    // A bad recipe stops the run (InputError: exit 2); none at all only skips the suite.
    if (const std::string text = kRecipeOption.text(context.options); !text.empty()) (void)recipe_named(text);
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      const ArmResult* python_default = find_arm(c, kPythonDefault);
      const ArmResult* python_recipe = find_arm(c, kPythonRecipe);
      if (python_default && python_recipe && python_default->status == ArmStatus::ok &&
          python_recipe->status == ArmStatus::ok) {
        if (auto k = compare_arms(*python_recipe, *python_default, trial_throughput(), settings)) {
          out.push_back(
              fmt::format("{}: in Python (the worker, the recipe's Python lines): python_recipe against "
                          "python_default {}",
                          level(c.params, "model"), comparison_words(*k)));
        }
      }
      const ArmResult* recipe = find_arm(c, "recipe");
      if (!recipe || recipe->status != ArmStatus::ok) continue;
      for (const auto& arm : c.arms) {
        if (arm.arm.rfind(kWithoutPrefix, 0) != 0 || arm.status != ArmStatus::ok) continue;
        const auto worth = compare_arms(*recipe, arm, trial_throughput(), settings);
        if (!worth) continue;
        out.push_back(fmt::format(
            "{}: {} is worth x{:.3f} [{:.3f}, {:.3f}] inside the recipe (the recipe vs the "
            "recipe without it): {}",
            level(c.params, "model"), arm.arm.substr(std::string(kWithoutPrefix).size()), worth->estimate.ratio,
            worth->estimate.ci_low, worth->estimate.ci_high, stats::verdict_words(worth->verdict)));
      }
    }
    return out;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    if (python_arm(arm)) {
      const auto applied = applied_by(c, arm);
      PythonStepSpec python{.model = spec.model, .batch_size = spec.batch_size};
      if (arm.name == kPythonRecipe) python.recipe = python_recipe_of(applied);
      for (const auto* ingredient : applied) python.environment.merge(environment_of(*ingredient, context));
      python.timeout_s = kPythonTimeoutOption.number(context.options);
      return make_python_step_workload(context, python);
    }
    std::vector<Restore> restores;
    nlohmann::json applied = nlohmann::json::array();
    try {
      for (const auto* ingredient : applied_by(c, arm)) {
        restores.push_back(ingredient->apply(context, spec));
        applied.push_back(ingredient->key());
      }
      return with_restore(make_training_workload(context, spec), in_reverse(restores), {{"ingredients", applied}});
    } catch (...) {
      in_reverse(restores)();
      throw;
    }
  }
};

TIPBENCH_REGISTER_SUITE(Recipe);

}  // namespace tipbench::suites
