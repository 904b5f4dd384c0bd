// A tip's place in the recipe (`tipbench advise`, the recipe suite): a suite that can lend one of
// its arms to a training step that combines several tips declares it here, from its own file, as
// an Ingredient: how the arm changes a TrainingSpec, what it changes besides speed (numerics,
// reproducibility), which tips it cannot go with and why, and the PyTorch lines that apply it in a
// user's Python script. Neither `advise` nor the recipe suite knows any tip by name. Example
// (suites/inplace.cpp):
//   TIPBENCH_REGISTER_INGREDIENT(inplace_relu, {
//       .tip = "inplace", .arm = "inplace",
//       .python = {.model_kwargs = {"inplace=True"},
//                  .comments = {"nn.ReLU(inplace=True) in the model's code"}},
//       .apply = [](const SuiteContext&, TrainingSpec& spec) -> Restore {
//         spec.model_options.inplace_relu = true; return {}; }});
// Whether it can run on a device and model is the suite's own skip_reason for its single-tip case.
#pragma once

#include "python_lines.h"
#include "training.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

// What a tip changes besides speed: a user may leave such tips out of the recipe
// (`advise --exclude numerics`).
inline constexpr const char* kChangesNumerics = "numerics";
inline constexpr const char* kChangesReproducibility = "reproducibility";

// A tip that cannot go with this one: "tip" (any of its arms) or "tip:arm", and why.
struct Exclusion {
  std::string tip;
  std::string reason;
};

// Undoes what an ingredient set process-wide (TF32, determinism); empty when it set nothing.
using Restore = std::function<void()>;

struct Ingredient {
  std::string tip;  // the suite's name
  std::string arm;  // its arm that the recipe applies
  // The levels (beyond model and batch) of the tip's single-tip case that measures the arm alone
  // against PyTorch's default: channels_last's {precision: fp32}.
  Levels alone_case;
  std::vector<std::string> changes;  // kChangesNumerics, kChangesReproducibility
  std::vector<Exclusion> excludes;
  PythonLines python;
  // A process-wide setting that nothing undoes (cuDNN's autotuner cache): a recipe holding it runs
  // every trial in a fresh process.
  bool sticky = false;
  // Environment variables a trial with this ingredient starts with (an allocator's LD_PRELOAD); a
  // recipe that needs any runs every trial in a fresh process. Null, or empty: none.
  std::function<std::map<std::string, std::string>(const SuiteContext&)> environment;
  // Changes the recipe's spec; null for a tip the recipe does not measure (outside_recipe says
  // why): ranked and given its Python lines all the same.
  std::function<Restore(const SuiteContext&, TrainingSpec&)> apply;
  std::string outside_recipe;
  // A tip that exists only in Python (torch.compile): it joins the recipe and recipe.py like any
  // training-step tip, but `apply` stays null, so the recipe suite's C++ arms leave it out; its
  // Python arms (python_default, python_recipe: the Python worker) apply it with the others' lines.
  bool python_only = false;
  // Why the arm's win depends on what else runs on the machine (a thread count's does): said
  // beside its ratio. "" when it does not.
  std::string load_sensitive;

  std::string key() const { return tip + ":" + arm; }
  bool in_training_step() const { return static_cast<bool>(apply) || python_only; }
};

bool register_ingredient(Ingredient ingredient);
// In registration order (that of suites/CMakeLists.txt).
const std::vector<Ingredient>& all_ingredients();
// "tip:arm"; nullptr when none is declared.
const Ingredient* find_ingredient(const std::string& key);
// Why a and b cannot go together (either one's declaration, or two arms of one tip); nullopt when
// they can.
std::optional<std::string> exclusion_between(const Ingredient& a, const Ingredient& b);
// The variables of the ingredient's environment for this context (empty when it declares none).
std::map<std::string, std::string> environment_of(const Ingredient& ingredient, const SuiteContext& context);
// The ingredients of "TIP:ARM,TIP:ARM" (or "+" between them, and "." for ":", as the recipe's case
// level writes them), in that order; throws InputError for an unknown or repeated one or two that
// cannot go together, naming it and the reason.
std::vector<const Ingredient*> parse_recipe(const std::string& text);
// "amp.bf16+channels_last.nhwc": the recipe as a case level (no ':' or ',' inside a case name).
std::string recipe_level(const std::vector<const Ingredient*>& ingredients);

// Whether a case with these params measures the ingredient alone on `model`: they hold that model
// and every level of alone_case. The plan (alone_arm) and the advice on results agree by it.
bool measures_alone(const Ingredient& ingredient, const Levels& case_params, const std::string& model);

// The case and arm the tip's own suite plans to measure the ingredient alone on `model` (the first
// case of that model whose params hold alone_case), with the suite's skip reason for them; the
// reason alone when the suite plans no such case.
struct AloneArm {
  std::optional<CaseSpec> c;
  std::optional<ArmSpec> arm;
  std::optional<std::string> unavailable;
};
AloneArm alone_arm(const Ingredient& ingredient, const SuiteContext& context, const std::string& model);

}  // namespace tipbench::suites

#define TIPBENCH_REGISTER_INGREDIENT(id, ...)                   \
  [[maybe_unused]] static const bool tipbench_ingredient_##id = \
      ::tipbench::suites::register_ingredient(::tipbench::suites::Ingredient __VA_ARGS__)
