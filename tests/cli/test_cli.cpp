// The `tipbench` command line: exit codes of usage errors, list/env output, and end-to-end runs,
// in-process through tipbench::cli::main and as the real binary (TIPBENCH_BINARY) in a child
// process: a whole --quick run, replacing an existing --out, and an interrupted run that must
// leave an existing result file untouched.
#include "tipbench/common/exit_codes.h"
#include "tipbench/environment/fingerprint.h"
#include "tipbench/machine/collect_fingerprint.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/result.h"
#include "cli/run/run_options.h"
#include "cli/run/run_resume.h"

#include "cli_capture.h"
#include "every_suite_run.h"
#include "running_child.h"
#include "scratch_dir.h"
#include "test_paths.h"
#include "text_match.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#ifndef TIPBENCH_BINARY
#error "TIPBENCH_BINARY must name the tipbench executable (tests/cli/CMakeLists.txt)"
#endif

extern char** environ;

namespace {

namespace fs = std::filesystem;
using tipbench::ArmStatus;
using tipbench::testing::cli;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::RunningChild;
using tipbench::testing::write_bytes;

// The suites these tests know in detail, in registration (suites/CMakeLists.txt) order. More may
// be registered; they are checked only for not failing.
const std::vector<std::string> kSuites = {"zero_grad", "conv_bias", "cudnn_benchmark"};

bool is_known_suite(const std::string& name) {
  return std::find(kSuites.begin(), kSuites.end(), name) != kSuites.end();
}

// `names` restricted to kSuites, keeping its order.
std::vector<std::string> known_only(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (is_known_suite(n)) out.push_back(n);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Usage errors: exit 2 with a message on stderr, nothing run.

TEST(CliUsage, NoSubcommandIsAUsageError) {
  const auto o = cli({});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "Valid subcommands")) << o.err;
}

TEST(CliUsage, UnknownSubcommandIsAUsageError) {
  const auto o = cli({"frobnicate"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  // The message lists what is valid. (It does not name "frobnicate": CLI11 reports "A subcommand
  // is required" for an unknown word in the subcommand's place.)
  EXPECT_TRUE(contains(o.err, "Valid subcommands: list, run, env")) << o.err;
}

TEST(CliUsage, UnknownFlagIsAUsageError) {
  EXPECT_EQ(cli({"run", "--frobnicate"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"list", "--frobnicate"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"env", "--frobnicate"}).code, tipbench::exit_code::usage);
}

TEST(CliUsage, UnknownSuiteIsAUsageError) {
  const auto o = cli({"run", "--suite", "nope"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "nope")) << o.err;
}

TEST(CliUsage, UnknownModelIsAUsageError) {
  const auto o = cli({"run", "--model", "nope"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "nope")) << o.err;
}

TEST(CliUsage, CudaWithoutADeviceIsAUsageErrorNotAFallback) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  for (const std::string device : {"cuda", "cuda:0"}) {
    const auto o = cli({"run", "--device", device, "--suite", "zero_grad"});
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << device;
    EXPECT_TRUE(contains(o.err, "no CUDA device")) << o.err;
  }
}

TEST(CliUsage, CudaIndexBeyondTheDevicesIsAUsageError) {
  const auto o = cli({"run", "--device", "cuda:63", "--suite", "zero_grad"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "cuda:63")) << o.err;
}

TEST(CliUsage, BogusDeviceIsAUsageError) {
  for (const std::string device : {"bogus", "mps", ""}) {
    const auto o = cli({"run", "--device", device, "--suite", "zero_grad"});
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << "'" << device << "'";
  }
}

TEST(CliUsage, BadNumbersAreUsageErrors) {
  EXPECT_EQ(cli({"run", "--blocks", "0"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"run", "--blocks", "-3"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"run", "--blocks", "many"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"run", "--batch-size", "0"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"run", "--threshold", "0"}).code, tipbench::exit_code::usage);
  // Options suites declare are checked from their declarations, before anything runs.
  const auto bucket = cli({"run", "--suite", "data_parallel", "--bucket-mb", "0"});
  EXPECT_EQ(bucket.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(bucket.err, "--bucket-mb: 0 is outside [0.001, 4096]")) << bucket.err;
  EXPECT_EQ(cli({"run", "--suite", "data_parallel", "--bucket-mb", "big"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(cli({"run", "--profile", "--quick"}).code, tipbench::exit_code::usage);
  for (const char* bad :
       {"soon", "15x", "m15", "0s", "1h 30m", "8d", "-5m", "9h9h9h9h9h9h9h9h9h9h9h9h9h9h9h9h9h9h9h"}) {
    const auto r = cli({"run", "--time-budget", bad});
    EXPECT_EQ(r.code, tipbench::exit_code::usage) << bad;
    EXPECT_TRUE(contains(r.err, "--time-budget")) << bad << ": " << r.err;
  }
}

// --estimate-from forecasts a time budget from a readable earlier result.
TEST(CliUsage, EstimateFromNeedsATimeBudgetAndAReadableResult) {
  const auto alone = cli({"run", "--suite", "zero_grad", "--estimate-from", "x.json", "--dry-run"});
  EXPECT_EQ(alone.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(alone.err, "--estimate-from forecasts a --time-budget")) << alone.err;
  const auto missing =
      cli({"run", "--suite", "zero_grad", "--time-budget", "5m", "--estimate-from", "/nonexistent.json", "--dry-run"});
  EXPECT_EQ(missing.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(missing.err, "--estimate-from")) << missing.err;
}

// --inject-slowdown-op names an op that exists but that the workload never calls (small_cnn has
// no LSTM): the run says no step was slowed, in its warnings and on the console, instead of
// claiming the delay was spent there.
TEST(CliRun, AnInjectedOpThatNeverRanIsSaid) {
  const auto dir = fresh_scratch_dir("cli_inject_op_never_ran");
  const auto out = (dir / "r.json").string();
  const auto r =
      cli({"run", "--suite", "zero_grad", "--quick", "--blocks", "2", "--trial-time", "0.01", "--count-steps", "0",
           "--inject-slowdown", "5", "--inject-slowdown-op", "aten::lstm", "--out", out});
  ASSERT_EQ(r.code, tipbench::exit_code::ok) << r.err;
  EXPECT_TRUE(contains(r.out, "the op never ran inside a step")) << r.out;
  const auto result = tipbench::read_result(out);
  EXPECT_EQ(std::count_if(result.context.warnings.begin(), result.context.warnings.end(),
                          [](const std::string& w) { return contains(w, "--inject-slowdown-op aten::lstm"); }),
            1)
      << "one warning of it (others may say the machine was loaded)";
  const auto called =
      cli({"run", "--suite", "zero_grad", "--quick", "--blocks", "2", "--trial-time", "0.01", "--count-steps", "0",
           "--inject-slowdown", "5", "--inject-slowdown-op", "aten::convolution", "--out", out});
  ASSERT_EQ(called.code, tipbench::exit_code::ok) << called.err;
  EXPECT_FALSE(contains(called.out, "never ran")) << called.out;
}

// A duration is parts like 1h, 30m, 45s written together in that order, or seconds alone; the
// run records seconds. A bare number after a unit ("1m5": 1m05s or 1.5m?) and units out of order
// or twice are refused, one line, exit 2.
TEST(CliRun, ATimeBudgetIsADurationRecordedInSeconds) {
  for (const std::string bad : {"1m5", "1m30", "1h30", "30m1h", "1m1m", "5s3", "m", "1x"}) {
    const auto r = cli({"run", "--suite", "zero_grad", "--time-budget", bad, "--dry-run"});
    EXPECT_EQ(r.code, tipbench::exit_code::usage) << bad << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "each with its unit")) << bad << ": " << r.err;
  }
  for (const auto& [text, seconds] : std::vector<std::pair<std::string, double>>{
           {"15m", 900}, {"90s", 90}, {"1h30m", 5400}, {"2.5m", 150}, {"900", 900}, {"1m30s", 90}, {"1h5s", 3605}}) {
    const auto r = cli({"run", "--suite", "zero_grad", "--time-budget", text, "--dry-run"});
    EXPECT_EQ(r.code, tipbench::exit_code::ok) << text << ": " << r.err;
    tipbench::cli::RunOptions o;
    o.time_budget_s = seconds;
    EXPECT_DOUBLE_EQ(tipbench::cli::measure_settings_from(o).time_budget_s, seconds) << text;
  }
}

// A suite's own flag with no selected suite that declares it would be ignored without a word:
// refused before anything else is looked at (here the bad device comes second).
TEST(CliUsage, ASuiteOptionNeedsASelectedSuiteThatDeclaresIt) {
  auto o = cli({"run", "--suite", "zero_grad", "--bucket-mb", "50", "--device", "bogus"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "--bucket-mb is an option of data_parallel")) << o.err;
  EXPECT_FALSE(contains(o.err, "--device")) << o.err;
  o = cli({"run", "--suite", "sync", "--loader-only", "--device", "bogus"});
  EXPECT_TRUE(contains(o.err, "--loader-only is an option of dataloader")) << o.err;
  // Selected (by name or by `all`): the option applies, and the next problem is the device.
  for (const std::string suite : {"data_parallel", "all"}) {
    o = cli({"run", "--suite", suite, "--bucket-mb", "50", "--device", "bogus"});
    EXPECT_EQ(o.code, tipbench::exit_code::usage);
    EXPECT_TRUE(contains(o.err, "--device bogus")) << suite << ": " << o.err;
  }
}

// A result that cannot be written names the partial file only when one holding finished cases is
// on disk (a full disk used to say both "cannot keep" and "kept in").
TEST(RunResume, AWriteFailureNeverNamesAPartialFileThatIsNotThere) {
  const auto none = tipbench::cli::result_write_failure("No space left on device", "");
  EXPECT_TRUE(contains(none, "No space left on device")) << none;
  EXPECT_FALSE(contains(none, "kept in")) << none;
  const auto kept = tipbench::cli::result_write_failure("No space left on device", "r.json.partial");
  EXPECT_TRUE(contains(kept, "kept in r.json.partial")) << kept;
  EXPECT_TRUE(contains(kept, "--resume r.json.partial")) << kept;
}

// The options kept in a partial run file come back as they were; damaged values are InputError
// (exit 2 at the CLI), never a wrapped or undefined conversion.
TEST(RunOptionsJson, RoundTripsAndRefusesDamagedValues) {
  tipbench::cli::RunOptions o;
  o.suites = {"zero_grad"};
  o.blocks = 3;
  o.seed = 18446744073709551615ull;
  o.out = "x.json";
  const auto j = tipbench::cli::run_options_to_json(o);
  const std::set<std::string> every_flag{
      "--suite", "--model", "--device",          "--batch-size", "--quick", "--blocks",       "--threshold",
      "--out",   "--seed",  "--inject-slowdown", "--profile",    "--nproc", "--oversubscribe"};
  EXPECT_TRUE(tipbench::cli::run_option_differences(tipbench::cli::run_options_from_json(j), o, every_flag).empty());
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"blocks", 1e300}, {"seed", -1}, {"nproc", "two"}, {"batch_size", 2.5}, {"suites", 3}}) {
    auto damaged = j;
    damaged[key] = value;
    EXPECT_THROW(tipbench::cli::run_options_from_json(damaged), tipbench::InputError) << key;
  }
  auto missing = j;
  missing.erase("device");
  EXPECT_THROW(tipbench::cli::run_options_from_json(missing), tipbench::InputError);
}

// Options read back from a partial file are checked by the rules of the flags that set them: a
// file that says blocks -5 or a suite that does not exist was edited, and is refused by name.
TEST(RunOptionsJson, RecordedOptionsAreCheckedAsTheFlagsAre) {
  const auto catalogue = tipbench::cli::run_option_catalogue();
  tipbench::cli::RunOptions good;
  good.suites = {"zero_grad"};
  good.out = "x.json";
  good.suite_options = tipbench::cli::default_suite_options();
  EXPECT_TRUE(tipbench::cli::run_option_problems(good, catalogue).empty());
  auto problem = [&](auto edit) {
    auto o = good;
    edit(o);
    const auto problems = tipbench::cli::run_option_problems(o, catalogue);
    return problems.empty() ? std::string() : problems.front();
  };
  EXPECT_TRUE(contains(problem([](auto& o) { o.suites = {"no_such_suite"}; }), "--suite: 'no_such_suite'"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.suites.clear(); }), "--suite"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.blocks = -5; }), "--blocks: -5"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.threshold_pct = -3; }), "--threshold"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.inject_slowdown_pct = std::nan(""); }), "--inject-slowdown"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.device = "tpu"; }), "--device: 'tpu'"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.models = {"alexnet"}; }), "--model: 'alexnet'"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.nproc = 0; }), "--nproc"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.suite_options["bucket-mb"] = "nan"; }), "--bucket-mb"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.suite_options["no-such-option"] = "1"; }), "no suite declares it"));
  EXPECT_EQ(problem([](auto& o) { o.blocks = 0; }), "") << "0: the preset's";
  EXPECT_TRUE(contains(problem([](auto& o) {
                         o.blocks = 6;
                         o.max_blocks = 20;
                       }),
                       "--blocks fixes the count"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.precision_pct = -1; }), "--precision"));
  EXPECT_TRUE(contains(problem([](auto& o) { o.trial_time_s = 1e9; }), "--trial-time"));
  EXPECT_EQ(problem([](auto& o) { o.max_blocks = 40; }), "") << "a cap alone is fine";
}

// --dry-run checks what a run checks before its first trial, then measures and writes nothing.
TEST(CliRun, DryRunChecksEverythingAndMeasuresNothing) {
  const auto dir = tipbench::testing::fresh_scratch_dir("dry_run");
  auto o = cli({"run", "--dry-run", "--suite", "zero_grad", "--device", "cpu", "--out", (dir / "r.json").string()});
  EXPECT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.out, "run --dry-run: ok: 1 suite(s)")) << o.out;
  EXPECT_TRUE(tipbench::testing::list_dir(dir).empty()) << "nothing written";
  o = cli({"run", "--dry-run", "--suite", "zero_grad", "--device", "bogus"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  o = cli(
      {"run", "--dry-run", "--suite", "zero_grad", "--device", "cpu", "--out", (dir / "plain" / "r.json").string()});
  EXPECT_EQ(o.code, tipbench::exit_code::ok) << "a directory that does not exist yet is made by the run";
}

TEST(CliUsage, HelpExitsZero) {
  const auto top = cli({"--help"});
  EXPECT_EQ(top.code, tipbench::exit_code::ok);
  for (const auto& sub : {"list", "run", "env"}) EXPECT_TRUE(contains(top.out, sub)) << top.out;
  const auto run = cli({"run", "--help"});
  EXPECT_EQ(run.code, tipbench::exit_code::ok);
  for (const auto& flag : {"--suite", "--model", "--device", "--quick", "--blocks", "--out"}) {
    EXPECT_TRUE(contains(run.out, flag)) << run.out;
  }
}

// Every flag a subcommand's --help lists is documented in docs/cli.md (as `--flag ...`).
TEST(CliUsage, EveryFlagIsDocumented) {
  const std::string docs = read_bytes(fs::path(TIPBENCH_SOURCE_DIR) / "docs" / "cli.md");
  ASSERT_FALSE(docs.empty());
  const std::vector<std::vector<std::string>> subcommands = {{"list"},
                                                             {"run"},
                                                             {"env"},
                                                             {"data", "make"},
                                                             {"baseline", "save"},
                                                             {"baseline", "list"},
                                                             {"baseline", "find"},
                                                             {"compare"},
                                                             {"gate"},
                                                             {"report"},
                                                             {"history"},
                                                             {"history", "detect"},
                                                             {"history", "bisect"},
                                                             {"history", "annotate"},
                                                             {"history", "report"},
                                                             {"advise"}};
  const std::regex flag(R"(^\s+(?:-\w,\s*)?(--[a-z][a-z0-9-]*))");
  for (auto args : subcommands) {
    args.push_back("--help");
    const auto help = cli(args);
    ASSERT_EQ(help.code, tipbench::exit_code::ok) << args[0];
    std::istringstream lines(help.out);
    int flags = 0;
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, flag) || m[1] == "--help") continue;
      ++flags;
      EXPECT_TRUE(contains(docs, "`" + m[1].str())) << args[0] << " " << m[1] << " is not in docs/cli.md";
    }
    // The parse must see flags where there are some: `list` and `baseline list` have none.
    const bool has_flags = !(args[0] == "list" || (args[0] == "baseline" && args[1] == "list"));
    if (has_flags) {
      EXPECT_GT(flags, 0) << args[0] << " " << args[1] << ": no flags parsed from --help";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// list and env
// ---------------------------------------------------------------------------------------------
// list and env

TEST(CliList, RegistryHoldsTheSuitesInCMakeOrder) {
  EXPECT_EQ(known_only(tipbench::suite_names()), kSuites);
  EXPECT_EQ(tipbench::suite_names().size(), tipbench::all_suites().size());
  for (const auto& name : kSuites) EXPECT_NE(tipbench::find_suite(name), nullptr) << name;
  EXPECT_EQ(tipbench::find_suite("nope"), nullptr);
}

TEST(CliList, NamesEverySuiteAndModel) {
  const auto o = cli({"list"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  for (const auto& suite : tipbench::suite_names()) EXPECT_TRUE(contains(o.out, suite)) << suite << "\n" << o.out;
  for (const auto& model : tipbench::models::available_models()) {
    EXPECT_TRUE(contains(o.out, model.name)) << model.name << "\n" << o.out;
  }
  // Arms are listed with their derived names, the baseline first.
  EXPECT_TRUE(contains(o.out, "none [set_to_none:true], zero [set_to_none:false]")) << o.out;
  if (!torch::cuda::is_available()) {
    EXPECT_TRUE(contains(o.out, "zero_grad/model:small_cnn/batch:32")) << o.out;
    EXPECT_TRUE(contains(o.out, "skipped here:")) << o.out;  // cudnn_benchmark on a CPU
  }
}

// The options suites declare are flags of `run`, named with the suites in --help and `list --options`.
TEST(CliList, OptionsListsWhatSuitesDeclare) {
  std::map<std::string, std::vector<std::string>> declared;
  for (const auto& [option, suites] : tipbench::declared_options()) declared[option.name] = suites;
  EXPECT_EQ(declared["data"], std::vector<std::string>{"dataloader"});
  EXPECT_EQ(declared["loader-only"], std::vector<std::string>{"dataloader"});
  EXPECT_EQ(declared["corrupt-policy"], std::vector<std::string>{"dataloader"});
  EXPECT_EQ(declared["bucket-mb"], std::vector<std::string>{"data_parallel"});
  const auto list = cli({"list", "--options"});
  ASSERT_EQ(list.code, tipbench::exit_code::ok) << list.err;
  const auto help = cli({"run", "--help"});
  for (const auto& [name, suites] : declared) {
    EXPECT_TRUE(contains(list.out, "--" + name + "  (")) << list.out;
    EXPECT_TRUE(contains(help.out, "--" + name)) << help.out;
  }
  EXPECT_TRUE(contains(list.out, "one of skip, fail; default: skip")) << list.out;
  EXPECT_TRUE(contains(list.out, "number in [0.001, 4096]; default: 25")) << list.out;
  EXPECT_TRUE(contains(help.out, "data_parallel: gradient bucket size in MB")) << help.out;
}

TEST(CliEnv, PrintsTheFingerprintAsJson) {
  const auto o = cli({"env"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(o.out)) << o.out;
  ASSERT_TRUE(j.contains("fingerprint_slug")) << o.out;
  ASSERT_TRUE(j.at("fingerprint_slug").is_string());
  EXPECT_FALSE(j.at("fingerprint_slug").get<std::string>().empty());
  tipbench::Fingerprint fp;
  ASSERT_NO_THROW(fp = j.at("fingerprint").get<tipbench::Fingerprint>());
  EXPECT_EQ(j.at("fingerprint_slug").get<std::string>(), tipbench::fingerprint_slug(fp));
}

TEST(CliEnv, CpuFlagGivesTheFingerprintOfACpuRun) {
  const auto o = cli({"env", "--cpu"});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  const auto fp = j.at("fingerprint").get<tipbench::Fingerprint>();
  EXPECT_TRUE(fp.gpus.empty());
  EXPECT_EQ(j.at("fingerprint_slug").get<std::string>(),
            tipbench::fingerprint_slug(tipbench::collect_fingerprint(/*include_gpus=*/false)));
}

// ---------------------------------------------------------------------------------------------
// End to end, in-process: a short run of one suite.

TEST(CliRun, QuickZeroGradRunWritesAReadableResult) {
  const auto dir = fresh_scratch_dir("cli_run_in_process");
  const std::string out = (dir / "nested" / "r.json").string();
  const std::vector<std::string> args = {"run",      "--quick", "--suite", "zero_grad", "--device", "cpu",
                                         "--blocks", "3",       "--seed",  "5",         "--out",    out};
  const auto o = cli(args);
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_TRUE(contains(o.out, "wrote " + out)) << o.out;

  const tipbench::Result r = tipbench::read_result(out);
  EXPECT_EQ(r.schema_version, tipbench::schema_version());
  EXPECT_EQ(r.context.device, "cpu");
  EXPECT_EQ(r.context.settings.blocks, 3);
  EXPECT_EQ(r.context.settings.seed, 5u);
  EXPECT_EQ(r.context.settings.trial_min_time_s, tipbench::quick_settings().trial_min_time_s);
  std::vector<std::string> argv = args;
  argv.insert(argv.begin(), "tipbench");
  EXPECT_EQ(r.context.argv, argv);
  EXPECT_FALSE(r.context.fingerprint_slug.empty());
  EXPECT_FALSE(r.context.timestamp_utc.empty());

  ASSERT_EQ(r.suites.size(), 1u);
  const auto& suite = r.suites[0];
  EXPECT_EQ(suite.name, "zero_grad");
  EXPECT_EQ(suite.isolation, "in_process");
  ASSERT_EQ(suite.cases.size(), 1u);
  const auto& c = suite.cases[0];
  EXPECT_EQ(c.name, "zero_grad/model:small_cnn/batch:32");
  ASSERT_EQ(c.arms.size(), 2u);
  EXPECT_EQ(c.arms[0].arm, "none");
  EXPECT_TRUE(c.arms[0].baseline);
  EXPECT_EQ(c.arms[0].name, "zero_grad/model:small_cnn/batch:32/arm:none");
  EXPECT_EQ(c.arms[1].arm, "zero");
  EXPECT_FALSE(c.arms[1].baseline);
  for (const auto& arm : c.arms) {
    SCOPED_TRACE(arm.name);
    EXPECT_EQ(arm.status, ArmStatus::ok) << arm.reason;
    ASSERT_EQ(arm.trials.size(), 3u);
    std::vector<int> blocks;
    for (const auto& t : arm.trials) {
      blocks.push_back(t.block);
      EXPECT_FALSE(t.step_times_ms.empty());
      EXPECT_GE(static_cast<int>(t.step_times_ms.size()), tipbench::quick_settings().trial_min_steps);
      for (double ms : t.step_times_ms) EXPECT_GT(ms, 0);
      EXPECT_GT(t.throughput_samples_per_s, 0);
      EXPECT_EQ(t.samples_per_step, 32);
      EXPECT_GE(t.warmup_steps, tipbench::quick_settings().warmup_min_steps);
    }
    EXPECT_EQ(blocks, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(arm.throughput_samples_per_s.n, 3u);
    EXPECT_GT(arm.throughput_samples_per_s.median, 0);
    EXPECT_GT(arm.step_time_ms.median, 0);
    EXPECT_FALSE(arm.info.empty());
  }
  ASSERT_FALSE(c.comparisons.empty());
  const auto& cmp = c.comparisons[0];
  EXPECT_EQ(cmp.treatment, "zero");
  EXPECT_EQ(cmp.baseline, "none");
  EXPECT_EQ(cmp.metric, "throughput_samples_per_s");
  EXPECT_EQ(cmp.estimate.blocks, 3u);
  EXPECT_GT(cmp.estimate.ratio, 0);
  EXPECT_LE(cmp.estimate.ci_low, cmp.estimate.ratio);
  EXPECT_GE(cmp.estimate.ci_high, cmp.estimate.ratio);
  EXPECT_EQ(list_dir(dir / "nested"), std::vector<std::string>{"r.json"});
}

// A CPU run records the process CPU time of every timed step beside its wall time, compares it,
// and with --profile writes one Chrome trace per arm, after the last block only.
TEST(CliRun, CpuTimeIsRecordedAndProfileWritesATracePerArm) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "CPU time is recorded on CPU runs";
  const auto dir = fresh_scratch_dir("cli_run_profile");
  const std::string out = (dir / "r.json").string();
  const std::string traces = (dir / "traces").string();
  const auto o = cli({"run", "--quick", "--suite", "zero_grad", "--device", "cpu", "--blocks", "3", "--out", out,
                      "--profile", traces});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  const auto r = tipbench::read_result(out);
  EXPECT_EQ(r.context.settings.profile_dir, traces);
  const auto& c = r.suites.at(0).cases.at(0);
  for (const auto& arm : c.arms) {
    SCOPED_TRACE(arm.name);
    for (const auto& t : arm.trials) {
      ASSERT_EQ(t.step_cpu_times_ms.size(), t.step_times_ms.size());
      for (double ms : t.step_cpu_times_ms) EXPECT_GT(ms, 0);
    }
    ASSERT_TRUE(arm.step_cpu_time_ms.has_value());
    EXPECT_EQ(arm.step_cpu_time_ms->n, arm.step_time_ms.n);

    ASSERT_TRUE(arm.profile.has_value());
    EXPECT_EQ(arm.profile->error, "");
    EXPECT_EQ(arm.profile->steps, 5);
    EXPECT_EQ(arm.profile->trace_file, (fs::path(traces) / (arm.name.substr(0, arm.name.find('/')) +
                                                            ".model-small_cnn.batch-32.arm-" + arm.arm + ".trace.json"))
                                           .string());
    nlohmann::json trace;
    ASSERT_NO_THROW(trace = nlohmann::json::parse(read_bytes(arm.profile->trace_file))) << arm.profile->trace_file;
    std::set<std::string> names;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.contains("name") && e.at("name").is_string()) names.insert(e.at("name").get<std::string>());
    }
    EXPECT_TRUE(names.contains("aten::conv2d")) << "small_cnn's convolutions are in the trace";
    EXPECT_TRUE(names.contains("aten::addmm")) << "and its classifier";
    ASSERT_FALSE(arm.profile->top_cpu_ops.empty());
    EXPECT_LE(arm.profile->top_cpu_ops.size(), 5u);
    EXPECT_GT(arm.profile->top_cpu_ops.front().self_ms_per_step, 0);
    EXPECT_TRUE(arm.profile->top_cuda_kernels.empty());
  }
  EXPECT_EQ(list_dir(traces).size(), c.arms.size());  // no partial trace left behind
  bool cpu_time_compared = false;
  for (const auto& cmp : c.comparisons) cpu_time_compared |= cmp.metric == "step_cpu_time_ms";
  EXPECT_TRUE(cpu_time_compared);
  EXPECT_TRUE(contains(o.out, "cpu time x")) << o.out;
}

// ---------------------------------------------------------------------------------------------
// End to end, the real binary in a child process.

// The shared quick run of every suite (every_suite_run.h): ctest runs this test first, as the
// fixture AdviseCli's test reads.
TEST(CliBinary, QuickRunOfAllSuitesReplacesAnExistingResult) {
  const auto& run = tipbench::testing::every_suite_run();
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_TRUE(contains(run.stdout_text, "wrote ") && contains(run.stdout_text, "/run/all.json")) << run.stdout_text;
  EXPECT_EQ(run.listing, "all.json\n") << "temporary file left behind";

  const tipbench::Result r = tipbench::read_result(run.result.string());
  const bool cuda = torch::cuda::is_available();
  EXPECT_EQ(r.context.device, cuda ? "cuda:0" : "cpu");
  EXPECT_EQ(r.context.settings.blocks, 3);
  EXPECT_EQ(r.context.settings.trial_min_time_s, tipbench::quick_settings().trial_min_time_s);
  std::vector<std::string> names;
  for (const auto& s : r.suites) names.push_back(s.name);
  ASSERT_EQ(names, tipbench::suite_names());  // every registered suite, in order
  ASSERT_EQ(known_only(names), kSuites);

  for (const auto& suite : r.suites) {
    SCOPED_TRACE(suite.name);
    EXPECT_FALSE(suite.description.empty());
    if (!is_known_suite(suite.name)) {  // a suite added later: it must at least not fail
      for (const auto& c : suite.cases) {
        for (const auto& arm : c.arms) EXPECT_NE(arm.status, ArmStatus::failed) << arm.name << ": " << arm.reason;
      }
      continue;
    }
    EXPECT_EQ(suite.isolation, suite.name == "cudnn_benchmark" ? "fresh_process" : "in_process");
    ASSERT_FALSE(suite.cases.empty());
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) {
        SCOPED_TRACE(arm.name);
        if (suite.name == "cudnn_benchmark" && !cuda) {
          EXPECT_EQ(arm.status, ArmStatus::skipped);
          EXPECT_TRUE(contains(arm.reason, "CUDA")) << arm.reason;
          EXPECT_TRUE(arm.trials.empty());
          continue;
        }
        EXPECT_EQ(arm.status, ArmStatus::ok) << arm.reason;
        EXPECT_EQ(static_cast<int>(arm.trials.size()), r.context.settings.blocks);
        for (const auto& t : arm.trials) {
          EXPECT_FALSE(t.step_times_ms.empty());
          EXPECT_GT(t.throughput_samples_per_s, 0);
        }
      }
      const bool runnable = suite.name != "cudnn_benchmark" || cuda;
      EXPECT_EQ(c.comparisons.empty(), !runnable) << c.name;
    }
  }
  // cudnn_benchmark plans a fixed-shape and a varying-shape case per model.
  for (const auto& suite : r.suites) {
    if (suite.name == "cudnn_benchmark") {
      EXPECT_EQ(suite.cases.size(), 2u);
    }
  }
}

// SIGINT in the middle of a run: the process ends (exit 130 or killed by the signal) and an
// existing file at --out is byte-identical afterwards, with no temporary file beside it (the
// partial file of its finished blocks may be).
TEST(CliBinary, InterruptedRunLeavesAnExistingResultUntouched) {
  const auto dir = fresh_scratch_dir("cli_binary_interrupt");
  const auto logs = fresh_scratch_dir("cli_binary_interrupt_logs");
  const auto out = dir / "existing.json";
  const std::string original = "{\"schema_version\": \"1.0\", \"note\": \"must survive\"}\n";
  write_bytes(out, original);

  // The default budget: far longer than the test waits, on any machine.
  RunningChild child({TIPBENCH_BINARY, "run", "--suite", "zero_grad", "--out", out.string()}, logs);
  ASSERT_TRUE(child.started()) << TIPBENCH_BINARY;
  // The header line is printed once the run is planned; then let it measure for a while.
  ASSERT_TRUE(child.wait_for_stderr("suite(s) on", std::chrono::seconds(120))) << child.describe();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_EQ(::kill(child.pid(), SIGINT), 0);
  ASSERT_TRUE(child.wait(std::chrono::seconds(60))) << "did not stop on SIGINT\n" << child.describe();

  EXPECT_TRUE((child.exited() && child.exit_code() == tipbench::exit_code::interrupted) ||
              (child.signaled() && child.signal() == SIGINT))
      << child.describe();
  EXPECT_EQ(read_bytes(out), original);
  // Beside it, the partial file once a block has finished (the run's blocks so far), no temporary.
  auto files = list_dir(dir);
  if (files.size() == 2 && files[1] == "existing.json.partial") files.pop_back();
  EXPECT_EQ(files, std::vector<std::string>{"existing.json"}) << "temporary file left behind";
}

}  // namespace
