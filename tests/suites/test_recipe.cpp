// The recipe (suites/recipe.cpp, suites/common/recipe.h): every tip's declaration names its own
// suite's single-tip case, exclusions and parse errors say why, the suite's arms (default, recipe,
// leave-one-out), its isolation and environment follow its ingredients, a recipe trial trains and
// puts every process-wide knob back, and each ingredient's Python lines run in the project's Python.
#include "common/recipe.h"
#include "common/recipe_script.h"
#include "child_process.h"
#include "suite_plan.h"
#include "test_paths.h"
#include "tipbench/results/result.h"
#include "tipbench/measure/trial.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using tipbench::InputError;
using tipbench::suites::all_ingredients;
using tipbench::suites::find_ingredient;
using tipbench::suites::Ingredient;
using tipbench::suites::parse_recipe;
using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

tipbench::SuiteContext recipe_context(const std::string& recipe) {
  auto context = cpu_context(true);
  context.options["recipe"] = recipe;
  return context;
}

std::string recipe_parse_error(const std::string& recipe) {
  try {
    parse_recipe(recipe);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A case measures an ingredient alone when its params hold the model and every alone_case level,
// whatever else they hold and in whatever order; the plan and the advice both decide by this.
TEST(RecipeIngredients, ACaseMeasuresTheIngredientAloneByItsModelAndAloneLevels) {
  const Ingredient* nhwc = find_ingredient("channels_last:nhwc");
  ASSERT_NE(nhwc, nullptr);
  ASSERT_EQ(nhwc->alone_case, (tipbench::Levels{{"precision", "fp32"}}));
  using tipbench::suites::measures_alone;
  EXPECT_TRUE(measures_alone(*nhwc, {{"model", "resnet50"}, {"batch", "128"}, {"precision", "fp32"}}, "resnet50"));
  EXPECT_TRUE(measures_alone(*nhwc, {{"precision", "fp32"}, {"model", "resnet50"}}, "resnet50"));
  EXPECT_FALSE(measures_alone(*nhwc, {{"model", "resnet50"}, {"precision", "bf16"}}, "resnet50"));
  EXPECT_FALSE(measures_alone(*nhwc, {{"model", "resnet50"}, {"batch", "128"}}, "resnet50"));
  EXPECT_FALSE(measures_alone(*nhwc, {{"model", "vit_b_16"}, {"precision", "fp32"}}, "resnet50"));
  EXPECT_FALSE(measures_alone(*nhwc, {{"model_name", "resnet50"}, {"precision", "fp32"}}, "resnet50"));
}

TEST(RecipeIngredients, EachNamesACaseItsOwnSuitePlansAlone) {
  ASSERT_GE(all_ingredients().size(), 10u);
  for (const auto& ingredient : all_ingredients()) {
    // LibTorch's default thread count is cpu_threads' baseline, not an arm of its own.
    if (ingredient.tip == "cpu_threads" && ingredient.arm == "t" + std::to_string(at::get_num_threads())) continue;
    const auto alone = tipbench::suites::alone_arm(ingredient, cpu_context(false), "small_cnn");
    ASSERT_TRUE(alone.c) << ingredient.key() << ": " << alone.unavailable.value_or("");
    EXPECT_EQ(alone.arm->name, ingredient.arm);
    EXPECT_TRUE(ingredient.in_training_step() || !ingredient.outside_recipe.empty()) << ingredient.key();
    for (const auto& e : ingredient.excludes) {
      const bool known = find_ingredient(e.tip) || tipbench::find_suite(e.tip);
      EXPECT_TRUE(known) << ingredient.key() << " excludes an unknown tip " << e.tip;
      EXPECT_FALSE(e.reason.empty());
    }
  }
  // A tip the suite skips here says why, in the suite's own words.
  const auto graphs =
      tipbench::suites::alone_arm(*find_ingredient("cuda_graphs:graph"), cpu_context(false), "small_cnn");
  ASSERT_TRUE(graphs.unavailable);
  EXPECT_TRUE(contains(*graphs.unavailable, "nothing to capture")) << *graphs.unavailable;
  const auto vit = tipbench::suites::alone_arm(*find_ingredient("channels_last:nhwc"), cpu_context(false), "vit_ti_16");
  ASSERT_TRUE(vit.unavailable);
  EXPECT_TRUE(contains(*vit.unavailable, "ViT")) << *vit.unavailable;
  // foreach is the optimizer's baseline on CUDA (Python's default there): nothing to turn on.
  const auto foreach =
      tipbench::suites::alone_arm(*find_ingredient("optimizer:foreach"), tipbench::testing::cuda_context(), "resnet18");
  ASSERT_TRUE(foreach.unavailable);
  EXPECT_TRUE(contains(*foreach.unavailable, "PyTorch's default on cuda")) << *foreach.unavailable;
}

TEST(RecipeIngredients, BadRecipesAreRefusedWithTheDeclaredReason) {
  EXPECT_TRUE(contains(recipe_parse_error("channels_last:nhwc,nope:x"), "no tip declares the ingredient 'nope:x'"));
  EXPECT_TRUE(contains(recipe_parse_error("determinism:deterministic,cudnn_benchmark:on"), "autotuner"));
  EXPECT_TRUE(contains(recipe_parse_error("cudnn_benchmark:on,determinism:deterministic"), "autotuner"));
  EXPECT_TRUE(contains(recipe_parse_error("cuda_graphs:graph,amp:fp16"), "loss scaler"));
  EXPECT_TRUE(contains(recipe_parse_error("amp:bf16,amp:fp16"), "two arms of one tip"));
  EXPECT_TRUE(contains(recipe_parse_error("inference:inference_mode"), "not measured inside a training step"));
  EXPECT_TRUE(contains(recipe_parse_error("amp:bf16,,tf32:tf32"), "empty entry"));
  EXPECT_TRUE(contains(recipe_parse_error("tf32:tf32,tf32:tf32"), "named twice"));
  // The case level's spelling reads back.
  const auto recipe = parse_recipe("amp.bf16+channels_last.nhwc");
  ASSERT_EQ(recipe.size(), 2u);
  EXPECT_EQ(tipbench::suites::recipe_level(recipe), "amp.bf16+channels_last.nhwc");
}

TEST(RecipeSuite, PlansTheDefaultTheRecipeAndLeaveOneOut) {
  const auto& s = suite_named("recipe");
  const auto none = s.cases(cpu_context(true));
  ASSERT_EQ(none.size(), 1u);
  const auto why = s.skip_reason(cpu_context(true), none[0], none[0].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "tipbench advise")) << *why;

  const auto context = recipe_context("channels_last:nhwc,optimizer:foreach");
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(tipbench::case_name("recipe", cases[0]),
            "recipe/model:small_cnn/batch:32/recipe:channels_last.nhwc+optimizer.foreach");
  EXPECT_EQ(arm_names(cases[0]),
            (std::vector<std::string>{"default", "recipe", "without_channels_last", "without_optimizer"}));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[1]));
  EXPECT_EQ(s.isolation(context), tipbench::Isolation::in_process);
  EXPECT_THROW(s.prepare_run(recipe_context("channels_last:nhwc,bogus:x")), InputError);
  // `run --suite all`: no recipe, the suite is skipped, and nothing the runner asks of it throws.
  EXPECT_NO_THROW(s.prepare_run(cpu_context(true)));
  EXPECT_TRUE(s.trial_environment(cpu_context(true), none[0], none[0].arms[1]).empty());

  // One tip: no leave-one-out arm (the recipe without it is the default).
  EXPECT_EQ(arm_names(s.cases(recipe_context("amp:bf16"))[0]), (std::vector<std::string>{"default", "recipe"}));
  // A tip the CPU cannot run skips the whole case, naming it.
  const auto graphs = recipe_context("cuda_graphs:graph");
  const auto skipped = s.skip_reason(graphs, s.cases(graphs)[0], s.cases(graphs)[0].arms[0]);
  ASSERT_TRUE(skipped);
  EXPECT_TRUE(contains(*skipped, "cuda_graphs:graph cannot run here")) << *skipped;
}

// A Python-only tip (compile) joins the recipe; the C++ arms leave it out (no leave-one-out for it)
// and the Python arms measure it. --recipe-python adds those arms to any recipe.
TEST(RecipeSuite, APythonOnlyTipIsMeasuredByThePythonArms) {
  const auto& s = suite_named("recipe");
  const auto with_compile = recipe_context("compile:default,channels_last:nhwc");
  EXPECT_EQ(arm_names(s.cases(with_compile)[0]),
            (std::vector<std::string>{"default", "recipe", "python_default", "python_recipe"}));
  auto verified = recipe_context("channels_last:nhwc,optimizer:foreach");
  verified.options["recipe-python"] = "true";
  EXPECT_EQ(arm_names(s.cases(verified)[0]),
            (std::vector<std::string>{"default", "recipe", "without_channels_last", "without_optimizer",
                                      "python_default", "python_recipe"}));
  // A recipe of Python-only tips has nothing for the C++ recipe arm to apply: skipped, saying so.
  const auto only = recipe_context("compile:default");
  const auto oc = s.cases(only)[0];
  const auto why = s.skip_reason(only, oc, oc.arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "exists only in Python")) << *why;
  EXPECT_FALSE(s.skip_reason(only, oc, oc.arms[3]));  // python_recipe
  const auto c = s.cases(with_compile)[0];
  auto cpp = s.prepare(with_compile, c, c.arms[1], {});
  EXPECT_EQ(cpp->info().at("ingredients"), nlohmann::json::array({"channels_last:nhwc"}));  // compile left out
}

// python_recipe runs the recipe's Python lines in the worker: recipe.py's channels_last and foreach.
TEST(RecipeSuite, ThePythonRecipeArmAppliesTheRecipesLinesInTheWorker) {
  const auto& s = suite_named("recipe");
  auto context = recipe_context("channels_last:nhwc,optimizer:foreach,cpu_threads:t1");
  context.options["recipe-python"] = "true";
  context.batch_size = 4;
  const auto c = s.cases(context)[0];
  const auto arm = c.arms.back();
  ASSERT_EQ(arm.name, "python_recipe");
  const auto t = tipbench::run_trial(s, context, c, arm, tipbench::testing::short_trial(), 0, 0);
  EXPECT_EQ(t.info.at("step"), "python_recipe");
  EXPECT_EQ(t.info.at("ingredients").size(), 3u) << t.info.dump();
  EXPECT_EQ(t.info.at("optimizer_impl"), "foreach");  // the recipe's, not the CPU's default loop
  EXPECT_EQ(t.info.at("channels_last"), true);
  EXPECT_EQ(t.info.at("threads"), 1);  // cpu_threads:t1's setup line ran in the worker
  EXPECT_GT(t.trial.throughput_samples_per_s, 0);
  const auto base =
      tipbench::run_trial(s, context, c, c.arms[c.arms.size() - 2], tipbench::testing::short_trial(), 0, 0);
  EXPECT_EQ(base.info.at("step"), "python_eager");  // python_default: the worker's step, no line applied
  EXPECT_EQ(base.info.at("optimizer_impl"), "loop");
}

TEST(RecipeSuite, StickyOrEnvironmentIngredientsRunInFreshProcesses) {
  const auto& s = suite_named("recipe");
  const auto cudnn = recipe_context("cudnn_benchmark:on,amp:bf16");
  EXPECT_EQ(s.isolation(cudnn), tipbench::Isolation::fresh_process);
  // cuBLAS's workspace setting is read once per process, on CUDA only (planned here, not run).
  EXPECT_EQ(s.isolation(recipe_context("determinism:deterministic,channels_last:nhwc")),
            tipbench::Isolation::in_process);
  auto det = tipbench::testing::cuda_context();
  det.options["recipe"] = "determinism:deterministic,channels_last:nhwc";
  EXPECT_EQ(s.isolation(det), tipbench::Isolation::fresh_process);
  const auto c = s.cases(det)[0];
  EXPECT_EQ(s.trial_environment(det, c, c.arms[1]).count("CUBLAS_WORKSPACE_CONFIG"), 1u);  // recipe
  EXPECT_TRUE(s.trial_environment(det, c, c.arms[0]).empty());                             // default
  EXPECT_TRUE(s.trial_environment(det, c, c.arms[2]).empty());                             // without determinism
}

TEST(RecipeSuite, AnAllocatorIsPreloadedIntoFreshProcessesForTheArmsThatHoldIt) {
  const auto& s = suite_named("recipe");
  const auto context = recipe_context("allocator:jemalloc,channels_last:nhwc");
  EXPECT_EQ(s.isolation(context), tipbench::Isolation::fresh_process);
  const auto c = s.cases(context)[0];
  EXPECT_EQ(s.trial_environment(context, c, c.arms[1]).count("LD_PRELOAD"), 1u);  // recipe
  EXPECT_TRUE(s.trial_environment(context, c, c.arms[0]).empty());                // default
  EXPECT_TRUE(s.trial_environment(context, c, c.arms[2]).empty());                // without_allocator
  // Here, without the preload, the trial refuses the arm as the allocator suite's own does.
  EXPECT_THROW(s.prepare(context, c, c.arms[1], {}), tipbench::ArmUnavailable);
}

TEST(RecipeSuite, ATrialTrainsAndPutsEveryKnobBack) {
  const auto& s = suite_named("recipe");
  const auto context = recipe_context("tf32:tf32,determinism:deterministic,optimizer:foreach,cpu_threads:t1");
  const auto c = s.cases(context)[0];
  auto& ctx = at::globalContext();
  const auto matmul_before = ctx.float32MatmulPrecision();
  const bool deterministic_before = ctx.deterministicAlgorithms();
  const int threads_before = at::get_num_threads();
  {
    auto workload = s.prepare(context, c, c.arms[1], {});
    EXPECT_EQ(ctx.float32MatmulPrecision(), at::Float32MatmulPrecision::HIGH);
    EXPECT_TRUE(ctx.deterministicAlgorithms());
    EXPECT_EQ(at::get_num_threads(), 1);
    workload->step();
    const auto applied = workload->info().at("ingredients");
    EXPECT_EQ(applied.size(), 4u) << applied.dump();
  }
  EXPECT_EQ(ctx.float32MatmulPrecision(), matmul_before);
  EXPECT_EQ(ctx.deterministicAlgorithms(), deterministic_before);
  EXPECT_EQ(at::get_num_threads(), threads_before);
  auto without = s.prepare(context, c, c.arms[2], {});  // without_tf32
  EXPECT_EQ(ctx.float32MatmulPrecision(), matmul_before);
  EXPECT_EQ(without->info().at("ingredients").size(), 3u);
}

// Each tip's lines alone, and every tip that can go with the others at once, as one script each,
// run for two steps in the project's Python on the CPU (CUDA-only flags are accepted there).
TEST(RecipeScript, EveryIngredientsLinesRunInTheProjectsPython) {
  const auto dir = tipbench::testing::fresh_scratch_dir("recipe_script");
  std::vector<std::vector<const Ingredient*>> scripts;
  std::vector<const Ingredient*> together;
  for (const auto& ingredient : all_ingredients()) {
    scripts.push_back({&ingredient});
    const bool fits = std::none_of(together.begin(), together.end(), [&](const Ingredient* other) {
      return tipbench::suites::exclusion_between(*other, ingredient).has_value();
    });
    if (fits) together.push_back(&ingredient);
  }
  scripts.push_back(together);
  std::vector<std::string> runner = {TIPBENCH_PYTHON, std::string(TIPBENCH_SOURCE_DIR) + "/tests/suites/run_scripts.py",
                                     (dir / "args.txt").string()};
  tipbench::testing::write_bytes(dir / "args.txt", "--device\ncpu\n--steps\n2\n");
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < scripts.size(); ++i) {
    const auto path = dir / ("recipe" + std::to_string(i) + ".py");
    // A header line comes from a result file: a newline in it must not end the comment (were it
    // to, the script would exit 7 below).
    texts.push_back(tipbench::suites::recipe_script(
        scripts[i], {.device = "cuda", .header = {"test", "on cpu\nraise SystemExit(7)\n#"}}));
    EXPECT_TRUE(contains(texts.back(), "\n# on cpu raise SystemExit(7) #\n")) << texts.back();
    for (const auto* ingredient : scripts[i]) {
      EXPECT_TRUE(contains(texts.back(), ingredient->key())) << ingredient->key() << " left no mark in\n"
                                                             << texts.back();
    }
    tipbench::testing::write_bytes(path, texts.back());
    runner.push_back(path.string());
  }
  // Each script in its own process, as `python recipeN.py --device cpu --steps 2` (torch imported once).
  const auto ran = tipbench::testing::run_child(runner, dir / "runner.out", dir / "runner.err");
  ASSERT_EQ(ran.code, 0) << ran.err;
  for (std::size_t i = 0; i < scripts.size(); ++i) {
    const std::string path = (dir / ("recipe" + std::to_string(i) + ".py")).string();
    const std::string code = tipbench::testing::read_bytes(path + ".code");
    EXPECT_EQ(code, "0\n") << scripts[i].front()->key() << ":\n"
                           << tipbench::testing::read_bytes(path + ".err") << "\n"
                           << texts[i];
    const std::string out = tipbench::testing::read_bytes(path + ".out");
    EXPECT_TRUE(contains(out, "recipe ran 2 steps on cpu")) << out;
  }
}

}  // namespace
