// What `tipbench advise` concludes from results (common/advice_ranking.h), on synthetic results
// whose comparisons are set by hand: the ranking, winners, the labels a user leaves out, the
// exclusions two tips declare, and the recipe's combined ratio beside the product of the singles;
// and its views (reports/advice_report.h) from that one typed Advice.
#include "common/advice_ranking.h"
#include "common/recipe.h"
#include "common/recipe_script.h"
#include "tipbench/reports/advice_report.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::Comparison;
using tipbench::Result;
using tipbench::stats::Verdict;

Comparison throughput(const std::string& arm, const std::string& baseline, double ratio, Verdict verdict) {
  Comparison c;
  c.treatment = arm;
  c.baseline = baseline;
  c.metric = "throughput_samples_per_s";
  c.estimate = {.ratio = ratio, .ci_low = ratio * 0.97, .ci_high = ratio * 1.03, .blocks = 8};
  c.verdict = verdict;
  return c;
}

// One case of `suite` on small_cnn: its baseline and one arm, compared on throughput.
void add_tip(Result& r, const std::string& suite, tipbench::Levels extra, const std::string& baseline,
             const std::string& arm, double ratio, Verdict verdict) {
  tipbench::SuiteResult s;
  s.name = suite;
  tipbench::CaseResult c;
  c.params = {{"model", "small_cnn"}, {"batch", "32"}};
  c.params.insert(c.params.end(), extra.begin(), extra.end());
  c.name = suite + "/" + tipbench::join_levels(c.params);
  tipbench::ArmResult base, treated;
  base.arm = baseline;
  base.baseline = true;
  treated.arm = arm;
  c.arms = {base, treated};
  c.comparisons = {throughput(arm, baseline, ratio, verdict)};
  s.cases = {c};
  r.suites.push_back(s);
}

Result single_tips() {
  Result r;
  r.context.device = "cuda:0";
  add_tip(r, "channels_last", {{"precision", "fp32"}}, "nchw", "nhwc", 1.30, Verdict::faster);
  add_tip(r, "amp", {{"layout", "nchw"}}, "fp32", "bf16", 1.80, Verdict::faster);
  add_tip(r, "cudnn_benchmark", {{"shapes", "fixed"}}, "off", "on", 1.10, Verdict::faster);
  add_tip(r, "determinism", {}, "default", "deterministic", 1.05, Verdict::faster);
  add_tip(r, "tf32", {}, "ieee", "tf32", 0.99, Verdict::no_significant_difference);
  add_tip(r, "inference", {}, "grad", "inference_mode", 1.50, Verdict::faster);
  return r;
}

const tipbench::AdvisedTip& ranked(const tipbench::Advice& a, const std::string& key) {
  for (const auto& t : a.ranked) {
    if (t.key() == key) return t;
  }
  throw std::runtime_error("not ranked: " + key);
}

std::vector<std::string> keys(const tipbench::Advice& a) { return a.recipe; }

TEST(Advice, RanksByRatioAndTakesTheWinnersThatGoTogether) {
  const auto advice = tipbench::suites::rank_tips(single_tips(), "small_cnn", {});
  EXPECT_EQ(advice.ranked.front().key(), "amp:bf16");
  EXPECT_EQ(keys(advice), (std::vector<std::string>{"amp:bf16", "channels_last:nhwc", "cudnn_benchmark:on"}));
  // determinism won too, but cuDNN's autotuner, the better tip, cannot go with it.
  EXPECT_NE(ranked(advice, "determinism:deterministic").left_out.find("autotuner"), std::string::npos);
  EXPECT_NE(ranked(advice, "inference:inference_mode").left_out.find("not part of the training step"),
            std::string::npos);
  EXPECT_FALSE(ranked(advice, "tf32:tf32").winner);
  // A tip no result measured comes last, saying so.
  EXPECT_EQ(advice.ranked.back().case_name, "");
  EXPECT_FALSE(advice.ranked.back().not_measured.empty());
}

// On CUDA the optimizer's baseline is foreach (Python's default there): the foreach tip is no
// change to rank, and says so instead of "too few blocks".
TEST(Advice, ATipThatIsTheCasesBaselineIsNothingToTurnOn) {
  auto results = single_tips();
  add_tip(results, "optimizer", {{"optimizer", "sgd"}, {"scope", "step"}}, "foreach", "fused", 1.01,
          Verdict::under_threshold);
  const auto advice = tipbench::suites::rank_tips(results, "small_cnn", {});
  const auto& foreach = ranked(advice, "optimizer:foreach");
  EXPECT_FALSE(foreach.winner);
  EXPECT_NE(foreach.not_measured.find("is the baseline of optimizer/"), std::string::npos) << foreach.not_measured;
  EXPECT_TRUE(ranked(advice, "optimizer:fused").throughput);
}

TEST(Advice, ExcludedLabelsLeaveTheirTipsOut) {
  const auto advice = tipbench::suites::rank_tips(
      single_tips(), "small_cnn", {tipbench::suites::kChangesNumerics, tipbench::suites::kChangesReproducibility});
  EXPECT_EQ(keys(advice), (std::vector<std::string>{"channels_last:nhwc"}));
  EXPECT_NE(ranked(advice, "amp:bf16").left_out.find("--exclude numerics"), std::string::npos);
  EXPECT_THROW(tipbench::suites::rank_tips(single_tips(), "resnet50", {}), tipbench::InputError);
}

TEST(Advice, TheRecipesRatioSitsBesideTheProductOfTheSingles) {
  auto advice = tipbench::suites::rank_tips(single_tips(), "small_cnn", {tipbench::suites::kChangesReproducibility});
  ASSERT_EQ(keys(advice), (std::vector<std::string>{"amp:bf16", "channels_last:nhwc"}));
  Result recipe;
  tipbench::SuiteResult s;
  s.name = "recipe";
  tipbench::CaseResult c;
  c.params = {{"model", "small_cnn"}, {"batch", "32"}, {"recipe", "amp.bf16+channels_last.nhwc"}};
  c.name = "recipe/model:small_cnn";
  for (const std::string arm : {"default", "recipe", "without_amp", "without_channels_last"}) {
    tipbench::ArmResult a;
    a.arm = arm;
    a.baseline = arm == "default";
    c.arms.push_back(a);
  }
  c.comparisons = {throughput("recipe", "default", 2.0, Verdict::faster)};
  s.cases = {c};
  recipe.suites = {s};
  tipbench::suites::read_recipe(recipe, advice);
  const auto& outcome = advice.outcome;
  ASSERT_TRUE(outcome.combined);
  EXPECT_DOUBLE_EQ(outcome.combined->estimate.ratio, 2.0);
  ASSERT_TRUE(outcome.product_of_singles);
  EXPECT_DOUBLE_EQ(*outcome.product_of_singles, 1.80 * 1.30);
  ASSERT_EQ(outcome.worth.size(), 2u);  // the arms have no trials: no leave-one-out ratio
  EXPECT_FALSE(outcome.worth[0]);
  // The code shows the recipe's lines by whole mark: a mark that merely starts like one of the
  // recipe's (as cpu_threads:t1 and cpu_threads:t16 do) is another tip's line.
  advice.code = tipbench::suites::lines_applying(
      "# amp:bf16: a caveat in the header\n"
      "    with torch.autocast(device.type, dtype=torch.bfloat16):  # amp:bf16\n"
      "    other_tips_line()  # amp:bf16x\n"
      "model = model.to(memory_format=torch.channels_last)  # tf32, channels_last:nhwc\n",
      advice.recipe);
  const std::string md = tipbench::reports::advice_markdown(advice, {.command = "tipbench advise"});
  EXPECT_NE(md.find("x2.000 [1.940, 2.060]"), std::string::npos) << md;
  EXPECT_NE(md.find("x2.340, outside the recipe's interval"), std::string::npos) << md;
  EXPECT_NE(md.find("torch.bfloat16):  # amp:bf16\n"), std::string::npos) << md;
  EXPECT_NE(md.find("# tf32, channels_last:nhwc"), std::string::npos) << md;
  EXPECT_EQ(md.find("other_tips_line"), std::string::npos) << md;
  EXPECT_EQ(md.find("a caveat in the header"), std::string::npos) << md;
  const auto json = tipbench::reports::advice_json(advice);
  EXPECT_EQ(json.at("recipe").at("tips").size(), 2u);
  EXPECT_EQ(json.at("ranked").size(), tipbench::suites::all_ingredients().size());
}

// A recipe whose tips are all settings of the environment (an allocator through LD_PRELOAD): no
// line of recipe.py applies it, so advice.md has no empty code block but the script's note on how
// to run it; and its interval is named as it is computed (a t-interval, not a bootstrap).
TEST(Advice, AnEnvironmentOnlyRecipeSaysHowToRunItNotAnEmptyCodeBlock) {
  tipbench::Advice advice;
  advice.model = "small_cnn";
  advice.device = "cpu";
  advice.recipe = {"allocator:jemalloc"};
  const std::vector<const tipbench::suites::Ingredient*> ingredients{
      tipbench::suites::find_ingredient("allocator:jemalloc")};
  ASSERT_NE(ingredients[0], nullptr);
  const std::string script = tipbench::suites::recipe_script(ingredients, {});
  advice.code = tipbench::suites::lines_applying(script, advice.recipe);
  advice.setup = tipbench::suites::notes_of(script, advice.recipe);
  EXPECT_EQ(advice.code, "") << "no line of code applies it";
  ASSERT_EQ(advice.setup.size(), 1u) << script;
  EXPECT_TRUE(advice.setup[0].starts_with("allocator:jemalloc: start Python with LD_PRELOAD")) << advice.setup[0];
  const std::string md = tipbench::reports::advice_markdown(advice, {.command = "tipbench advise"});
  EXPECT_EQ(md.find("```python\n```"), std::string::npos) << md;
  EXPECT_EQ(md.find("```python"), std::string::npos) << md;
  EXPECT_NE(md.find("- allocator:jemalloc: start Python with LD_PRELOAD"), std::string::npos) << md;
  EXPECT_EQ(md.find("bootstrap"), std::string::npos) << md;
  EXPECT_NE(md.find("t-interval"), std::string::npos) << md;
}

// A recipe with compile (Python only): the C++ product leaves it out, the Python arms' ratio is
// read with the harness's rule and shown beside the C++ one.
TEST(Advice, APythonOnlyTipIsJudgedInPythonBesideTheCppRecipe) {
  Result single = single_tips();
  add_tip(single, "compile", {}, "eager", "default", 1.50, Verdict::faster);
  auto advice = tipbench::suites::rank_tips(single, "small_cnn", {tipbench::suites::kChangesReproducibility});
  ASSERT_EQ(keys(advice), (std::vector<std::string>{"amp:bf16", "compile:default", "channels_last:nhwc"}));
  Result recipe;
  tipbench::SuiteResult s;
  s.name = "recipe";
  tipbench::CaseResult c;
  c.params = {{"model", "small_cnn"}, {"batch", "32"}, {"recipe", "amp.bf16+compile.default+channels_last.nhwc"}};
  c.name = "recipe/model:small_cnn";
  for (const std::string arm : {"default", "recipe", "python_default", "python_recipe"}) {
    tipbench::ArmResult a;
    a.arm = arm;
    a.baseline = arm == "default";
    const double rate = arm == "python_recipe" ? 300 : arm == "recipe" ? 200 : 100;
    for (int b = 0; b < 5; ++b) {
      tipbench::Trial t;
      t.block = b;
      t.throughput_samples_per_s = rate * (b % 2 ? 1.01 : 0.99);
      a.trials.push_back(t);
    }
    c.arms.push_back(a);
  }
  c.comparisons = {throughput("recipe", "default", 2.0, Verdict::faster)};
  s.cases = {c};
  recipe.suites = {s};
  recipe.context.settings = tipbench::quick_settings();
  tipbench::suites::read_recipe(recipe, advice);
  const auto& outcome = advice.outcome;
  ASSERT_TRUE(outcome.python_combined);
  EXPECT_NEAR(outcome.python_combined->estimate.ratio, 3.0, 1e-9);
  EXPECT_EQ(outcome.python_only, (std::vector<std::string>{"compile:default"}));
  ASSERT_TRUE(outcome.product_of_singles);
  EXPECT_DOUBLE_EQ(*outcome.product_of_singles, 1.80 * 1.30);  // compile's 1.50 is not in the C++ recipe
  const std::string md = tipbench::reports::advice_markdown(advice, {.command = "tipbench advise"});
  EXPECT_NE(md.find("without compile:default (it exists only in Python)"), std::string::npos) << md;
  EXPECT_NE(md.find("**in Python** (the worker running the recipe's lines, as recipe.py holds them): **x3.000"),
            std::string::npos)
      << md;
  EXPECT_EQ(tipbench::reports::advice_json(advice).at("recipe").at("python_only"),
            nlohmann::json::array({"compile:default"}));
}

// A --quick run, or one that shared its CPUs, is advice not to act on, said first with each run's
// conditions; a significant ratio whose interval is wider than itself is no win (x28.0 [2.9, 37.0]
// from a loaded 2-core machine); a thread count's ratio says that it depends on the load.
TEST(Advice, AQuickOrLoadedRunIsNotAdviceToKeepAndANoisyRatioIsNoWin) {
  Result loaded = single_tips();
  loaded.context.argv = {"tipbench", "run", "--quick"};
  loaded.context.conditions = {{"cpus", 2},
                               {"wall_s", 60.0},
                               {"foreign_cpu", 0.45},
                               {"steal", 0.0},
                               {"load_average_start", 5.2},
                               {"load_average_end", 6.1}};
  add_tip(loaded, "cpu_threads", {}, "default", "t1", 28.0, Verdict::faster);
  loaded.suites.back().cases[0].comparisons[0].estimate = {.ratio = 28.0, .ci_low = 2.9, .ci_high = 37.0, .blocks = 6};
  const auto advice = tipbench::suites::rank_tips(loaded, "small_cnn", {});
  const auto& threads = ranked(advice, "cpu_threads:t1");
  EXPECT_FALSE(threads.winner);
  EXPECT_FALSE(threads.in_recipe);
  EXPECT_NE(threads.left_out.find("[2.900, 37.000] is wider than the ratio itself"), std::string::npos)
      << threads.left_out;
  EXPECT_FALSE(threads.load_sensitive.empty());
  EXPECT_EQ(keys(advice), (std::vector<std::string>{"amp:bf16", "channels_last:nhwc", "cudnn_benchmark:on"}));
  ASSERT_EQ(advice.not_to_keep.size(), 2u);
  const std::string md = tipbench::reports::advice_markdown(advice, {.command = "tipbench advise --quick"});
  EXPECT_EQ(md.find("> **Not advice to keep:** the single-tip run shared its CPUs"), md.find('\n') + 2) << md;
  EXPECT_NE(md.find("the single-tip run is --quick: a smoke run"), std::string::npos) << md;
  EXPECT_NE(md.find("other processes kept 45% of its 2 CPUs busy, the hypervisor stole 0%, load average 5.2 to 6.1"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("too noisy to call a win"), std::string::npos) << md;
  EXPECT_NE(md.find("(depends on the load: "), std::string::npos) << md;
  const auto json = tipbench::reports::advice_json(advice);
  EXPECT_EQ(json.at("not_to_keep").size(), 2u);
  EXPECT_EQ(json.at("conditions").size(), 1u);

  Result quiet = single_tips();  // a full run on a quiet machine: nothing to warn of
  quiet.context.conditions = {{"cpus", 2}, {"wall_s", 600.0}, {"foreign_cpu", 0.02}, {"steal", 0.0}};
  EXPECT_TRUE(tipbench::suites::rank_tips(quiet, "small_cnn", {}).not_to_keep.empty());
}

}  // namespace
