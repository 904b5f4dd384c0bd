// `tipbench advise`: which tips to turn on for this device and model. It measures every tip that
// declares its part in a recipe (suites/common/recipe.h) alone (or reads --from), ranks them
// (advice.h), measures the winners together against the default with leave-one-out arms (the
// recipe suite), and writes advice.md, advice.json, recipe.py and report.html. Each measurement
// is a child `tipbench run` (cli/shared/child_runs.h), so an interrupted advise keeps what the children kept.
#include "cli/commands.h"

#include "common/advice_ranking.h"
#include "cli/shared/cli_checks.h"
#include "common/recipe_script.h"
#include "common/training.h"
#include "cli/shared/child_runs.h"
#include "cli/shared/device_choice.h"
#include "tipbench/common/atomic_file.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/models/model.h"
#include "tipbench/reports/advice_report.h"
#include "tipbench/reports/html_report.h"
#include "tipbench/machine/run_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <set>

namespace tipbench::cli {

namespace {

struct AdviseFlags {
  std::string model;
  std::string model_file;
  std::string device = "auto";
  bool quick = false;
  int blocks = 0;
  std::uint64_t seed = 0;
  std::vector<std::string> from;
  std::vector<std::string> exclude;
  bool verify = false;
  std::string out_dir;
  std::string chartjs = reports::default_chartjs_path();
  std::vector<std::string> argv;
};

// The `run` arguments both measurements share: what is measured where, and how long.
std::vector<std::string> shared_run_args(const AdviseFlags& f) {
  std::vector<std::string> args;
  if (!f.model.empty()) args.insert(args.end(), {"--model", f.model});
  if (!f.model_file.empty()) args.insert(args.end(), {"--model-file", f.model_file});
  args.insert(args.end(), {"--device", f.device, "--seed", std::to_string(f.seed)});
  if (f.quick) args.push_back("--quick");
  if (f.blocks > 0) args.insert(args.end(), {"--blocks", std::to_string(f.blocks)});
  return args;
}

// The tips that declare an ingredient, once each, in registration order.
std::vector<std::string> tip_suites() {
  std::vector<std::string> out;
  for (const auto& i : suites::all_ingredients()) {
    if (std::find(out.begin(), out.end(), i.tip) == out.end()) out.push_back(i.tip);
  }
  return out;
}

// The model the single-tip results were measured on: --model, a model file's name, else the one
// model the run trained.
std::string model_of(const AdviseFlags& f, const Result& single) {
  if (!f.model.empty()) return f.model;
  if (!single.context.model_file.is_null()) return single.context.model_file.value("name", "");
  std::set<std::string> models;
  for (const auto& s : single.suites) {
    for (const auto& c : s.cases) {
      for (const auto& [name, value] : c.params) {
        if (name == "model") models.insert(value);
      }
    }
  }
  if (models.size() != 1) {
    throw InputError(
        fmt::format("the --from results hold {} models; name the one to advise on with --model", models.size()));
  }
  return *models.begin();
}

// `run`'s default model for the device (small_cnn on a CPU): the one model advise ranks.
std::string default_model(const AdviseFlags& f) {
  std::string error;
  const auto device = resolve_device(f.device, error);
  if (!device) throw InputError(error);
  SuiteContext context;
  context.device = *device;
  context.quick = f.quick;
  return suites::models_to_run(context).front();
}

// The single-tip results of several `run`s of one machine and device, as one result (a suite in two
// files: the later one's).
Result one_machines_results(const std::vector<std::string>& files) {
  Result merged = read_result(files.front());
  for (std::size_t i = 1; i < files.size(); ++i) {
    Result more = read_result(files[i]);
    if (more.context.fingerprint_slug != merged.context.fingerprint_slug ||
        more.context.device != merged.context.device) {
      throw InputError(fmt::format("--from: {} was measured on {} ({}), {} on {} ({}): give one machine's results",
                                   files[i], more.context.fingerprint_slug, more.context.device, files.front(),
                                   merged.context.fingerprint_slug, merged.context.device));
    }
    for (auto& suite : more.suites) {
      std::erase_if(merged.suites, [&](const SuiteResult& s) { return s.name == suite.name; });
      merged.suites.push_back(std::move(suite));
    }
  }
  return merged;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

void write_report(const AdviseFlags& f, const Result& single, const std::optional<Result>& recipe,
                  const Advice& advice) {
  Result merged = single;
  if (recipe) merged.suites.insert(merged.suites.end(), recipe->suites.begin(), recipe->suites.end());
  const std::vector<reports::NamedRun> runs{{"advise", merged}};
  auto model = reports::report_model(runs, {}, {.title = "tipbench advise"});
  write_file_atomically(f.out_dir + "/report.html",
                        reports::render_html(model, runs, reports::read_chartjs(f.chartjs), f.out_dir, &advice));
}

int advise(AdviseFlags f) {
  const std::string self = self_executable_path();
  if (f.out_dir.empty()) f.out_dir = "results/advise/" + compact_utc_timestamp();
  make_dirs(f.out_dir);
  if (f.model.empty() && f.model_file.empty() && f.from.empty()) f.model = default_model(f);
  Result single;
  std::string single_path = command_line(f.from);
  if (f.from.empty()) {
    single_path = f.out_dir + "/tips.json";
    std::vector<std::string> args;
    for (const auto& tip : tip_suites()) args.insert(args.end(), {"--suite", tip});
    const auto shared = shared_run_args(f);
    args.insert(args.end(), shared.begin(), shared.end());
    // What a child refuses (a model file it cannot load, a device that is not there) is the user's
    // input: exit 2, found before anything is measured.
    const auto checked = child_dry_run(self, args, f.out_dir + "/tips.log");
    if (checked.code == exit_code::usage) throw InputError(checked.error);
    if (checked.code != exit_code::ok) {
      throw ChildRunError(fmt::format("`run --dry-run` exited with {}: {}", checked.code, checked.error));
    }
    fmt::print(stderr, "advise: measuring {} tips alone (log: {}/tips.log)\n", tip_suites().size(), f.out_dir);
    single = run_once(self, args, single_path, f.out_dir + "/tips.log");
  } else {
    single = one_machines_results(f.from);
    if (f.device == "auto") f.device = single.context.device;  // the recipe runs where the tips did
  }
  Advice advice =
      suites::rank_tips(single, model_of(f, single), std::set<std::string>(f.exclude.begin(), f.exclude.end()));
  std::optional<Result> recipe_run;
  std::string recipe_path;
  if (!advice.recipe.empty()) {
    const std::string recipe = fmt::format("{}", fmt::join(advice.recipe, ","));
    recipe_path = f.out_dir + "/recipe.json";
    auto args = shared_run_args(f);
    if (f.model.empty() && f.model_file.empty()) args.insert(args.end(), {"--model", advice.model});
    args.insert(args.end(), {"--suite", "recipe", "--recipe", recipe});
    if (f.verify) args.push_back("--recipe-python");  // python_recipe vs python_default, in the worker
    fmt::print(stderr, "advise: measuring the recipe {} and its leave-one-out arms (log: {}/recipe.log)\n", recipe,
               f.out_dir);
    recipe_run = run_once(self, args, recipe_path, f.out_dir + "/recipe.log");
  }
  if (recipe_run) suites::read_recipe(*recipe_run, advice);
  const std::string script_path = f.out_dir + "/recipe.py";
  std::vector<const suites::Ingredient*> ingredients;
  for (const auto& key : advice.recipe) ingredients.push_back(suites::find_ingredient(key));
  const std::string script = suites::recipe_script(
      ingredients, {.device = advice.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu",
                    .header = {fmt::format("tipbench advise's recipe for {} on {}", advice.model, advice.device),
                               "made by: " + command_line(f.argv)}});
  write_file_atomically(script_path, script);
  advice.code = suites::lines_applying(script, advice.recipe);
  advice.setup = suites::notes_of(script, advice.recipe);
  const reports::AdviceFiles files{
      .command = command_line(f.argv), .single = single_path, .recipe = recipe_path, .script = script_path};
  const std::string md = reports::advice_markdown(advice, files);
  write_file_atomically(f.out_dir + "/advice.md", md);
  write_file_atomically(f.out_dir + "/advice.json", reports::advice_json(advice).dump(2) + "\n");
  try {
    write_report(f, single, recipe_run, advice);
  } catch (const InputError& e) {  // Chart.js missing: the advice stands without the page
    fmt::print(stderr, "warning: no report.html: {}\n", e.what());
  }
  fmt::print("{}\nwrote {}/advice.md, advice.json, recipe.py and report.html\n", md, f.out_dir);
  return exit_code::ok;
}

int run_advise(const AdviseFlags& f) {
  if (!f.model.empty() && !f.model_file.empty())
    return usage_error("--model and --model-file name one model: give one");
  for (const auto& label : f.exclude) {
    if (label != suites::kChangesNumerics && label != suites::kChangesReproducibility) {
      return usage_error(
          fmt::format("--exclude {}: give {} or {}", label, suites::kChangesNumerics, suites::kChangesReproducibility));
    }
  }
  // Before any work, as `history report --out` and `run --out` do: results that cannot be read and
  // a folder it cannot write are exit 2, and nothing is made.
  if (!f.from.empty()) {
    try {
      const Result single = one_machines_results(f.from);
      (void)suites::rank_tips(single, model_of(f, single), std::set<std::string>(f.exclude.begin(), f.exclude.end()));
    } catch (const InputError& e) {
      return usage_error(e.what());
    }
  }
  AdviseFlags checked = f;
  if (checked.out_dir.empty()) checked.out_dir = "results/advise/" + compact_utc_timestamp();
  if (!output_dir_writable("--out", checked.out_dir)) return exit_code::usage;
  return with_child_runs("advise", [&checked] { return advise(checked); });
}

}  // namespace

Command add_advise_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto* sub = app.add_subcommand(
      "advise",
      "Which tips to turn on for this device and model: each tip alone, ranked, then the winners together with "
      "leave-one-out arms; writes advice.md, recipe.py (the PyTorch lines) and report.html");
  auto f = std::make_shared<AdviseFlags>();
  f->argv = argv;
  std::vector<std::string> names;
  for (const auto& m : models::available_models()) names.push_back(m.name);
  sub->add_option("--model", f->model, "Reference model (default: the device's, as `run`)")
      ->check(CLI::IsMember(names));
  sub->add_option("--model-file", f->model_file,
                  "Your own model file (docs/own-model.md; a TorchScript file is code: only files you trust)")
      ->check(not_a_flag() & CLI::ExistingFile);
  sub->add_option("--device", f->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  sub->add_flag("--quick", f->quick, "Quick trials for both measurements (a smoke run, not advice to keep)");
  sub->add_option("--blocks", f->blocks, "Blocks per measurement (default: run's)")->check(CLI::Range(3, 1000));
  sub->add_option("--seed", f->seed, "Seed of both measurements")->check(seed_value())->capture_default_str();
  sub->add_option("--from", f->from,
                  "Single-tip results to rank (`run` results of one machine and device, repeatable: a GPU campaign's "
                  "files) instead of measuring them; the recipe is still measured, on the same device")
      ->check(not_a_flag() & CLI::ExistingFile);
  sub->add_option("--exclude", f->exclude,
                  "Leave out tips that change this (repeatable): numerics (AMP, TF32) or reproducibility "
                  "(cudnn.benchmark, determinism)")
      ->check(not_a_flag());
  sub->add_flag("--verify", f->verify,
                "Also run the recipe in Python (the worker applies recipe.py's lines) against Python's default step, "
                "interleaved with the C++ arms; advice.md gives both ratios (always on for a recipe with compile)");
  sub->add_option("--out", f->out_dir, "Output folder (default results/advise/<UTC time>)")->check(not_a_flag());
  sub->add_option("--chartjs", f->chartjs, "Chart.js for report.html")->capture_default_str()->check(not_a_flag());
  return {sub, [f] { return run_advise(*f); }};
}

}  // namespace tipbench::cli
