// Bad input never crashes the real binary: every subcommand's outputs driven into unwritable
// paths (a directory, a path under a regular file, procfs) are refused before any work with one
// line and exit 2 — never "terminate called" (exit 134) or a backtrace; the CLI's traps (a flag
// taken as a value, a negative seed, DBL_MAX in a message, an unknown flag, two report inputs of
// one name) and rank counts beyond the cores. The binary runs in child processes, so this test
// links no LibTorch.
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "test_paths.h"
#include "text_match.h"
#include "tipbench_cmd.h"

#include <gtest/gtest.h>

#include <tuple>

#include <sched.h>

#include <regex>
#include <string>
#include <vector>

#ifndef TIPBENCH_BINARY
#error "TIPBENCH_BINARY must name the tipbench executable (tests/cli/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::list_dir;
using tipbench::testing::synthetic_run;
using tipbench::testing::tipbench_cmd;
using tipbench::testing::write_bytes;

using Outcome = tipbench::testing::ChildOutcome;

std::string save(const fs::path& dir, const std::string& name, const tipbench::Result& r) {
  const std::string path = (dir / name).string();
  tipbench::write_result_atomically(r, path);
  return path;
}

// Exit 2 with one `error:` line naming the path: no abort, no backtrace, no second message.
void expect_refused(const Outcome& o, const std::string& path, const std::string& what) {
  SCOPED_TRACE(what + " -> " + path);
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "error: ")) << o.err;
  EXPECT_TRUE(contains(o.err, path.substr(0, 40))) << o.err;  // long paths are abbreviated
  EXPECT_LT(o.err.size(), 1000u) << "a 100 kB path is not repeated in full";
  EXPECT_FALSE(contains(o.err, "terminate called")) << o.err;
  EXPECT_FALSE(contains(o.err, "frame #")) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

struct Paths {
  std::vector<std::string> bad_files;  // where no file can be written
  std::vector<std::string> bad_dirs;   // where no directory can be made
};

// Besides unwritable places: a file name that is legal but leaves no room for the temporary file
// the write makes beside it (240 + ".json" + ".tmp-XXXXXX" > 255 bytes), and a 100 kB name.
Paths unwritable(const fs::path& dir) {
  write_bytes(dir / "plain", "a regular file");
  return {.bad_files = {dir.string(), (dir / "plain" / "x.json").string(), "/proc/tipbench-no-such/x.json",
                        (dir / (std::string(240, 'a') + ".json")).string(), (dir / std::string(100000, 'b')).string()},
          .bad_dirs = {(dir / "plain").string(), (dir / "plain" / "d").string(), "/proc/tipbench-no-such"}};
}

TEST(UnwritableOutputs, RunIsRefusedBeforeTheFirstTrial) {
  const auto dir = fresh_scratch_dir("errors_run");
  for (const auto& path : unwritable(dir).bad_files) {
    const auto o = tipbench_cmd(dir, {"run", "--suite", "zero_grad", "--quick", "--out", path});
    expect_refused(o, path, "run --out");
    EXPECT_FALSE(contains(o.err, "suite(s) on")) << "nothing was started: " << o.err;
  }
}

TEST(UnwritableOutputs, CompareInEveryFormat) {
  const auto dir = fresh_scratch_dir("errors_compare");
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  const auto b = save(dir, "b.json", synthetic_run({.seed = 2}));
  for (const auto& path : unwritable(dir).bad_files) {
    for (const std::string format : {"text", "markdown", "json"}) {
      expect_refused(tipbench_cmd(dir, {"compare", a, b, "--format", format, "--out", path}), path,
                     "compare " + format);
    }
  }
}

TEST(UnwritableOutputs, ReportInEveryFormat) {
  const auto dir = fresh_scratch_dir("errors_report");
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  for (const auto& path : unwritable(dir).bad_dirs) {
    for (const std::string format : {"html", "markdown", "gbench"}) {
      expect_refused(tipbench_cmd(dir, {"report", a, "--format", format, "--out", path}), path, "report " + format);
    }
  }
}

TEST(UnwritableOutputs, GateMarkdownJsonAndOutDir) {
  const auto dir = fresh_scratch_dir("errors_gate");
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  const auto b = save(dir, "b.json", synthetic_run({.seed = 2}));
  const auto paths = unwritable(dir);
  for (const auto& path : paths.bad_files) {
    for (const std::string flag : {"--markdown", "--json"}) {
      expect_refused(tipbench_cmd(dir, {"gate", "--baseline", a, "--current", b, "--no-rerun", flag, path}), path,
                     "gate " + flag);
    }
  }
  for (const auto& path : paths.bad_dirs) {
    expect_refused(tipbench_cmd(dir, {"gate", "--baseline", a, "--current", b, "--no-rerun", "--out-dir", path}), path,
                   "gate --out-dir");
  }
}

TEST(UnwritableOutputs, DataMakeAndBaselineSave) {
  const auto dir = fresh_scratch_dir("errors_data_baseline");
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  for (const auto& path : unwritable(dir).bad_dirs) {
    expect_refused(tipbench_cmd(dir, {"data", "make", "--out", path, "--images", "2", "--size", "16x16"}), path,
                   "data make");
    expect_refused(tipbench_cmd(dir, {"baseline", "--dir", path, "save", a}), path, "baseline save");
  }
}

TEST(CliTraps, AFlagIsNeverTakenAsAValue) {
  const auto dir = fresh_scratch_dir("traps_flag_value");
  const auto o = tipbench_cmd(dir, {"run", "--out", "--quick"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "got the flag '--quick'")) << o.err;
  EXPECT_FALSE(fs::exists("--quick"));
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  EXPECT_EQ(tipbench_cmd(dir, {"compare", a, a, "--out", "--format"}).code, tipbench::exit_code::usage);
  EXPECT_EQ(tipbench_cmd(dir, {"report", a, "--out", "--title"}).code, tipbench::exit_code::usage);
}

TEST(CliTraps, ANegativeSeedIsRefusedNotWrapped) {
  const auto dir = fresh_scratch_dir("traps_seed");
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"run", "--suite", "zero_grad", "--seed", "-1"},
                                             {"compare", a, a, "--seed", "-1"},
                                             {"gate", "--baseline", a, "--current", a, "--seed", "-1"},
                                             {"data", "make", "--out", (dir / "d").string(), "--seed", "-1"}}) {
    const auto o = tipbench_cmd(dir, args);
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << args[0] << ": " << o.err;
    EXPECT_TRUE(contains(o.err, "'-1' is not a whole number")) << o.err;
  }
}

TEST(CliTraps, ABadBatchSizeSaysSoInAFewWords) {
  const auto dir = fresh_scratch_dir("traps_batch");
  for (const std::string value : {"0", "-4", "1.5", "1e400"}) {
    const auto o = tipbench_cmd(dir, {"run", "--batch-size", value});
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << value;
    EXPECT_LT(o.err.size(), 300u) << o.err;
    EXPECT_FALSE(std::regex_search(o.err, std::regex("[0-9]{20,}"))) << "no DBL_MAX in full: " << o.err;
  }
}

// NaN and infinity compare false with everything, so a range check alone lets them through:
// `run --threshold nan` ran with 2%, `--inject-slowdown nan` wrote a result with null in it.
// Every floating-point flag refuses them, with one line, before any work.
TEST(CliTraps, NanAndInfinityAreRefusedByEveryNumberFlag) {
  const auto dir = fresh_scratch_dir("traps_nan");
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  const std::string out = (dir / "never.json").string();
  for (const std::string value : {"nan", "-inf", "infinity", "1e999"}) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"run", "--suite", "zero_grad", "--quick", "--out", out, "--threshold", value},
             {"run", "--suite", "zero_grad", "--quick", "--out", out, "--inject-slowdown", value},
             {"run", "--suite", "data_parallel", "--quick", "--out", out, "--bucket-mb", value},
             {"compare", a, a, "--threshold", value},
             {"report", a, "--out", (dir / "r").string(), "--threshold", value},
             {"gate", "--baseline", a, "--current", a, "--threshold", value},
             {"gate", "--baseline", a, "--current", a, "--alpha", value},
             {"gate", "--baseline", a, "--current", a, "--head-inject-slowdown", value}}) {
      SCOPED_TRACE(args[0] + " " + args[args.size() - 2] + " " + value);
      const auto o = tipbench_cmd(dir, args);
      EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
      EXPECT_TRUE(contains(o.err, value)) << "names the value: " << o.err;
      EXPECT_FALSE(contains(o.err, "suite(s) on")) << "nothing was started: " << o.err;
    }
  }
  EXPECT_FALSE(fs::exists(out));
}

// A result records its command line as JSON text: a path that is not UTF-8 is refused before
// any work, never found by the JSON library after the benchmark (exit 4 with its raw text).
// --explain's flags: an op name that is no op, or that no op registered has, --explain-steps without --explain or out
// of range, the op knob without its percentage; --count-steps out of range or no number; an unknown
// --instructions mode, Callgrind with nothing to count; the extra-ops knob at 0 or no number. One
// line each, exit 2, nothing run.
TEST(CliTraps, ExplainsFlagsAreCheckedBeforeAnyWork) {
  const auto dir = fresh_scratch_dir("traps_explain");
  const std::string out = (dir / "never.json").string();
  const std::vector<std::string> run{"run", "--suite", "zero_grad", "--quick", "--out", out};
  for (const auto& extra :
       std::vector<std::vector<std::string>>{{"--inject-slowdown", "5", "--inject-slowdown-op", "addmm; rm -rf /"},
                                             {"--inject-slowdown-op", "aten::addmm"},
                                             {"--explain-steps", "3"},
                                             {"--explain", "--explain-steps", "0"},
                                             {"--explain", "--explain-steps", "101"},
                                             {"--count-steps", "101"},
                                             {"--count-steps", "-1"},
                                             {"--count-steps", "two"},
                                             {"--inject-slowdown", "5", "--inject-slowdown-op", "aten::nonexistent_op"},
                                             {"--inject-slowdown", "5", "--inject-slowdown-op", "aten::add.Tensor"},
                                             {"--instructions", "rdtsc"},
                                             {"--instructions", "callgrind", "--count-steps", "0"},
                                             {"--inject-extra-ops", "0"},
                                             {"--inject-extra-ops", "many"}}) {
    auto args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    SCOPED_TRACE(extra.back());
    const auto o = tipbench_cmd(dir, args);
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
    EXPECT_FALSE(contains(o.err, "suite(s) on")) << "nothing was started: " << o.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

// A suite option's bad value names its flag once: CLI11 puts the flag in front of the message,
// which used to carry it too ("--recipe: --recipe: an empty recipe").
TEST(CliTraps, ASuiteOptionsErrorNamesItsFlagOnce) {
  const auto dir = fresh_scratch_dir("traps_suite_option_names");
  for (const auto& [suite, flag, value] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"recipe", "--recipe", ""}, {"compile", "--python-timeout", "0"}, {"compile", "--python-timeout", "x"}}) {
    const auto o = tipbench_cmd(dir, {"run", "--suite", suite, flag, value, "--dry-run"});
    SCOPED_TRACE(flag + " '" + value + "'");
    EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
    const auto first = o.err.find(flag + ":");
    ASSERT_NE(first, std::string::npos) << o.err;
    EXPECT_EQ(o.err.find(flag + ":", first + 1), std::string::npos) << "named twice: " << o.err;
  }
}

TEST(CliTraps, RunRefusesAnArgumentAResultCannotRecord) {
  const auto dir = fresh_scratch_dir("traps_utf8");
  const std::string out = (dir / "x\xff.json").string();
  const auto o = tipbench_cmd(dir, {"run", "--suite", "zero_grad", "--quick", "--out", out});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "is not valid UTF-8")) << o.err;
  EXPECT_TRUE(contains(o.err, "x\\xff.json")) << o.err;
  EXPECT_FALSE(contains(o.err, "json.exception")) << o.err;
  EXPECT_FALSE(contains(o.err, "suite(s) on")) << "nothing was started: " << o.err;
}

// A dataset that cannot fit the disk (10 million 2000x2000 JPEGs: about 19 TB) is refused at
// once with what it needs, not started.
TEST(CliTraps, ADatasetLargerThanTheDiskIsRefusedBeforeWriting) {
  const auto dir = fresh_scratch_dir("traps_data_space");
  const auto out = (dir / "d").string();
  const auto o = tipbench_cmd(dir, {"data", "make", "--out", out, "--images", "10000000", "--size", "2000x2000"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "need about")) << o.err;
  EXPECT_LT(o.seconds, 30) << "refused before writing, not after";
  EXPECT_TRUE(list_dir(dir / "d").size() <= 1) << "at most the lock file";
}

TEST(CliTraps, AnUnknownFlagListsThatSubcommandsFlags) {
  const auto dir = fresh_scratch_dir("traps_unknown_flag");
  auto o = tipbench_cmd(dir, {"run", "--frobnicate"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "Valid flags of `tipbench run`: --suite")) << o.err;
  EXPECT_FALSE(contains(o.err, "Valid subcommands")) << o.err;
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  o = tipbench_cmd(dir, {"baseline", "save", a, "--frobnicate"});
  EXPECT_EQ(o.code, tipbench::exit_code::usage);
  EXPECT_TRUE(contains(o.err, "Valid flags of `tipbench baseline save`: --name, --force")) << o.err;
}

TEST(CliTraps, ReportGbenchKeepsTwoInputsOfOneFileName) {
  const auto dir = fresh_scratch_dir("traps_gbench");
  fs::create_directories(dir / "x");
  fs::create_directories(dir / "y");
  const auto a = save(dir / "x", "run.json", synthetic_run({.seed = 1}));
  const auto b = save(dir / "y", "run.json", synthetic_run({.seed = 2}));
  const auto o = tipbench_cmd(dir, {"report", a, b, "--format", "gbench", "--out", (dir / "out").string()});
  ASSERT_EQ(o.code, tipbench::exit_code::ok) << o.err;
  EXPECT_EQ(list_dir(dir / "out"), (std::vector<std::string>{"run-2.gbench.json", "run.gbench.json"}));
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

TEST(RankCounts, MoreRanksThanCoresAreRefusedBeforeAnyStarts) {
  const auto dir = fresh_scratch_dir("ranks_too_many");
  const int cores = usable_cores();
  const std::vector<std::string> run{"run", "--suite", "data_parallel", "--device", "cpu", "--quick"};
  auto args = run;
  args.insert(args.end(), {"--nproc", "1024"});
  auto o = tipbench_cmd(dir, args);
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "--oversubscribe")) << o.err;
  EXPECT_LT(o.seconds, 60) << "refused, not launched";

  args = run;
  args.insert(args.end(), {"--nproc", std::to_string(cores + 1)});
  EXPECT_EQ(tipbench_cmd(dir, args).code, tipbench::exit_code::usage);

  args = run;
  args.insert(args.end(), {"--nproc", std::to_string(4 * cores + 1), "--oversubscribe"});
  o = tipbench_cmd(dir, args);
  EXPECT_EQ(o.code, tipbench::exit_code::usage) << o.err;
  EXPECT_TRUE(contains(o.err, "at most 4 ranks per core")) << o.err;
}

}  // namespace
