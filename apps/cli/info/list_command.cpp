// `tipbench list`: the suites with their cases and arms (as a run on this device would plan
// them), and the reference models; `list --options`: the flags suites declare for `run`;
// `list --ingredients`: the tips' parts in a recipe (suites/common/recipe.h).
#include "cli/commands.h"

#include "common/recipe.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

namespace tipbench::cli {

namespace {

void print_suites(const SuiteContext& context) {
  fmt::print("Suites (cases and arms as planned for device {}; the first arm is the baseline):\n",
             context.device.str());
  for (const Suite* suite : all_suites()) {
    fmt::print("\n  {:<18} {}\n", suite->name(), suite->description());
    if (suite->isolation(context) == Isolation::fresh_process)
      fmt::print("  {:<18} (every trial in a fresh process)\n", "");
    for (const auto& c : suite->cases(context)) {
      std::vector<std::string> arms;
      for (const auto& arm : c.arms) arms.push_back(arm.name + " [" + join_levels(arm.levels) + "]");
      fmt::print("    {}\n      arms: {}\n", case_name(suite->name(), c), fmt::join(arms, ", "));
      if (auto why = suite->skip_reason(context, c, c.arms.front())) fmt::print("      skipped here: {}\n", *why);
    }
  }
}

void print_models() {
  fmt::print("\nModels (--model):\n");
  for (const auto& m : models::available_models()) {
    fmt::print("  {:<12} {:<4} {:>4}px  {}\n", m.name, m.family, m.default_image_size, m.description);
  }
}

void print_suite_options() {
  fmt::print("Suite options (tipbench run --NAME; each declared by the suites named):\n");
  for (const auto& [option, suites] : declared_options()) {
    std::string kind{to_string(option.type)};
    if (option.type == OptionType::choice) kind = fmt::format("one of {}", fmt::join(option.choices, ", "));
    if (option.type == OptionType::number) kind = fmt::format("number in [{:g}, {:g}]", option.min, option.max);
    fmt::print("\n  --{}  ({}; default: {})\n    {}: {}\n", option.name, kind,
               option.default_value.empty() ? "none" : option.default_value, fmt::join(suites, ", "), option.help);
  }
}

void print_ingredients() {
  fmt::print("Ingredients (tipbench run --suite recipe --recipe TIP:ARM,...; tipbench advise picks them):\n");
  for (const auto& i : suites::all_ingredients()) {
    fmt::print("\n  {}{}\n", i.key(),
               i.changes.empty() ? "" : fmt::format("  (changes {})", fmt::join(i.changes, ", ")));
    if (!i.alone_case.empty()) fmt::print("    measured alone on: {}\n", join_levels(i.alone_case));
    if (!i.in_training_step()) fmt::print("    not in the recipe's step: {}\n", i.outside_recipe);
    if (i.sticky) fmt::print("    a recipe holding it runs every trial in a fresh process\n");
    if (i.environment) fmt::print("    sets environment variables at a trial's start (a fresh process)\n");
    for (const auto& e : i.excludes) fmt::print("    cannot go with {}: {}\n", e.tip, e.reason);
  }
}

}  // namespace

Command add_list_command(CLI::App& app) {
  auto* sub = app.add_subcommand("list", "List the suites (cases, arms) and the reference models");
  auto options_only = std::make_shared<bool>(false);
  sub->add_flag("--options", *options_only, "List the options suites declare for `tipbench run` instead");
  auto ingredients_only = std::make_shared<bool>(false);
  sub->add_flag("--ingredients", *ingredients_only,
                "List instead the tips' parts in a recipe (tipbench advise, the recipe suite): what each changes, "
                "what it cannot go with");
  return {sub, [options_only, ingredients_only] {
            if (*options_only) {
              print_suite_options();
              return exit_code::ok;
            }
            if (*ingredients_only) {
              print_ingredients();
              return exit_code::ok;
            }
            SuiteContext context;
            context.device = torch::cuda::is_available() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
            print_suites(context);
            print_models();
            return exit_code::ok;
          }};
}

}  // namespace tipbench::cli
