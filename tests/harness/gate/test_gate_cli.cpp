// The baseline/compare/gate/report subcommands as a user runs them: the real tipbench binary in a
// child process (so this test needs no LibTorch), on synthetic result files, with their exit
// codes and the bad-input contract (clear message, exit 2 or 3, nothing overwritten); and one
// tiny real gate: head vs base interleaved on the quick zero_grad suite with a large injected
// slowdown, which must end in a confirmed FAIL (exit 1).
#include "tipbench/results/result.h"

#include "child_process.h"
#include "running_child.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "test_paths.h"
#include "text_match.h"
#include "tipbench_cmd.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>

#ifndef TIPBENCH_BINARY
#error "TIPBENCH_BINARY must name the tipbench executable"
#endif

namespace {

namespace fs = std::filesystem;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::synthetic_run;
using tipbench::testing::tipbench_cmd;
using tipbench::testing::write_bytes;

bool is_executable_file(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

std::string save(const fs::path& dir, const std::string& name, const tipbench::Result& r) {
  const std::string path = (dir / name).string();
  tipbench::write_result_atomically(r, path);
  return path;
}

TEST(CompareCli, ComparesRunsAndMarksOtherHardware) {
  const auto dir = fresh_scratch_dir("compare_cli");
  const auto a = save(dir, "a.json", synthetic_run({.cv = 0.005, .seed = 1}));
  const auto b = save(dir, "b.json", synthetic_run({.cpu_model = "Another CPU", .cv = 0.005, .seed = 2}));
  const auto o = tipbench_cmd(dir, {"compare", a, b});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "DIFFERENT FINGERPRINT than A: cpu_model")) << o.out;
  EXPECT_TRUE(contains(o.out, "zero_grad/model:m0/batch:8/arm:treat")) << o.out;
  const auto md = tipbench_cmd(dir, {"compare", a, b, "--format", "markdown"});
  EXPECT_EQ(md.code, 0);
  EXPECT_TRUE(contains(md.out, "| cell | metric |")) << md.out;
  const auto js = tipbench_cmd(dir, {"compare", a, b, "--format", "json"});
  EXPECT_EQ(js.code, 0);
  EXPECT_EQ(nlohmann::json::parse(js.out).at(0).at("cells").size(), 4u);  // 2 arms x (throughput, memory)
}

TEST(CompareCli, BadInputIsExitTwoWithTheReason) {
  const auto dir = fresh_scratch_dir("compare_cli_bad");
  const auto good = save(dir, "good.json", synthetic_run({}));
  const std::string text = read_bytes(good);
  write_bytes(dir / "truncated.json", text.substr(0, text.size() / 2));
  auto doc = nlohmann::json::parse(text);
  doc["schema_version"] = "2.0";
  write_bytes(dir / "v2.json", doc.dump());
  write_bytes(dir / "other.json", R"({"hello": "world"})");
  const auto t = tipbench_cmd(dir, {"compare", good, (dir / "truncated.json").string()});
  EXPECT_EQ(t.code, 2);
  EXPECT_TRUE(contains(t.err, "not valid JSON (truncated or corrupt?)")) << t.err;
  const auto v = tipbench_cmd(dir, {"compare", good, (dir / "v2.json").string()});
  EXPECT_EQ(v.code, 2);
  EXPECT_TRUE(contains(v.err, "schema version 2.0 is not supported")) << v.err;
  EXPECT_EQ(tipbench_cmd(dir, {"compare", good, (dir / "other.json").string()}).code, 2);
  EXPECT_EQ(tipbench_cmd(dir, {"compare", good, (dir / "missing.json").string()}).code, 2);
  EXPECT_EQ(tipbench_cmd(dir, {"compare", good}).code, 2);  // needs two
}

TEST(GateCli, StoredBaselinePassesWithExitZeroAndWritesMarkdown) {
  const auto dir = fresh_scratch_dir("gate_cli_pass");
  // CPU runs, as `run` records them: the committed config gates their CPU time.
  const auto base = save(dir, "base.json", synthetic_run({.cv = 0.005, .seed = 1, .cpu_time = true}));
  const auto cur = save(dir, "cur.json", synthetic_run({.cv = 0.005, .seed = 2, .cpu_time = true}));
  const auto md = (dir / "gate.md").string();
  const auto o = tipbench_cmd(dir, {"gate", "--baseline", base, "--current", cur, "--markdown", md, "--config",
                                    std::string(TIPBENCH_SOURCE_DIR) + "/ci/gate-thresholds.json"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_TRUE(contains(o.out, "Result is: PASS")) << o.out;
  EXPECT_TRUE(contains(read_bytes(md), "tipbench gate: **PASS**"));
  EXPECT_TRUE(contains(o.out, "cpu time")) << o.out;
  EXPECT_FALSE(contains(o.out, "arm:base throughput")) << o.out;
}

TEST(GateCli, ABaselineFromOtherHardwareIsExitTwoAndNothingIsWritten) {
  const auto dir = fresh_scratch_dir("gate_cli_other_hw");
  const auto base = save(dir, "base.json", synthetic_run({.cpu_model = "Another CPU", .seed = 1}));
  const auto cur = save(dir, "cur.json", synthetic_run({.seed = 2}));
  write_bytes(dir / "gate.md", "previous");
  for (bool across : {false, true}) {
    std::vector<std::string> args{
        "gate", "--baseline", base, "--current", cur, "--markdown", (dir / "gate.md").string()};
    if (across) args.push_back("--across-software");  // other software may gate, other hardware never
    const auto o = tipbench_cmd(dir, args);
    EXPECT_EQ(o.code, 2);
    EXPECT_TRUE(contains(o.err, "baseline from other hardware")) << o.err;
    EXPECT_TRUE(contains(o.err, "cpu_model Another CPU -> Test CPU")) << o.err;
    EXPECT_EQ(read_bytes(dir / "gate.md"), "previous");
  }
}

// The stack A/B opt-in: a baseline of this hardware under LibTorch 2.10.0 gates a 2.11.0 run only
// with --across-software, and the verdict leads with the change under test.
TEST(GateCli, OtherSoftwareGatesOnlyWithTheOptInAndLeadsWithTheChange) {
  const auto dir = fresh_scratch_dir("gate_cli_across");
  const auto base = save(dir, "base.json", synthetic_run({.libtorch_version = "2.10.0", .cv = 0.005, .seed = 1}));
  const auto cur = save(dir, "cur.json", synthetic_run({.cv = 0.005, .seed = 2}));
  const auto refused = tipbench_cmd(dir, {"gate", "--baseline", base, "--current", cur});
  EXPECT_EQ(refused.code, 2);
  EXPECT_TRUE(contains(refused.err, "baseline from other software")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "Add --across-software")) << refused.err;
  const auto md = (dir / "gate.md").string();
  const auto o = tipbench_cmd(
      dir, {"gate", "--baseline", base, "--current", cur, "--across-software", "--markdown", md, "--no-rerun"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_TRUE(contains(o.out, "change under test: libtorch_version 2.10.0 -> 2.11.0")) << o.out;
  EXPECT_TRUE(contains(read_bytes(md), "**Change under test:** libtorch_version 2.10.0 -&gt; 2.11.0"))
      << read_bytes(md);
}

TEST(GateCli, AutoAcrossSoftwareFindsTheNewestBaselineOfThisHardware) {
  const auto dir = fresh_scratch_dir("gate_cli_auto_across");
  const auto store = dir / "b";
  const auto older = synthetic_run({.libtorch_version = "2.9.0", .seed = 1, .timestamp = "2026-10-01T00:00:00Z"});
  const auto newer = synthetic_run({.libtorch_version = "2.10.0", .seed = 3, .timestamp = "2026-11-01T00:00:00Z"});
  const auto other_hardware = synthetic_run(
      {.cpu_model = "Another CPU", .libtorch_version = "2.10.0", .seed = 4, .timestamp = "2026-11-20T00:00:00Z"});
  for (const auto& r : {older, newer, other_hardware}) {
    save(dir, "run.json", r);
    ASSERT_EQ(tipbench_cmd(dir, {"baseline", "--dir", store.string(), "save", (dir / "run.json").string()}).code, 0);
  }
  const auto cur = save(dir, "cur.json", synthetic_run({.seed = 2}));
  const auto plain =
      tipbench_cmd(dir, {"gate", "--baseline", "auto", "--current", cur, "--baselines-dir", store.string()});
  EXPECT_EQ(plain.code, 3);  // none of this exact fingerprint
  const auto o = tipbench_cmd(dir, {"gate", "--baseline", "auto", "--across-software", "--current", cur,
                                    "--baselines-dir", store.string(), "--no-rerun"});
  EXPECT_NE(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "cpu-test-2c_torch2.10.0")) << o.err;
  EXPECT_TRUE(contains(o.out, "change under test: libtorch_version 2.10.0 -> 2.11.0")) << o.out;
}

// A slug is a directory of the store, so it is checked like one: no '..', not empty, not 100 kB;
// a store that is a file or "" is a usage error, not an empty store; a 100 kB name is refused
// with a short message.
TEST(BaselineStore, SlugsDirsAndNamesAreChecked) {
  const auto dir = fresh_scratch_dir("baseline_checks");
  const auto store = (dir / "b").string();
  const auto run = save(dir, "run.json", synthetic_run({}));
  for (const std::string& slug : std::vector<std::string>{"../../etc", "", "UPPER", ".hidden", std::string(300, 'a')}) {
    const auto o = tipbench_cmd(dir, {"baseline", "--dir", store, "find", "--slug", slug});
    EXPECT_EQ(o.code, 2) << "'" << slug << "': " << o.err;
    EXPECT_TRUE(contains(o.err, "is not a fingerprint slug")) << o.err;
    EXPECT_LT(o.err.size(), 600u);
  }
  write_bytes(dir / "plain", "a file");
  for (const std::string& bad : {(dir / "plain").string(), std::string()}) {
    for (const std::string command : {"list", "find"}) {
      const auto o = tipbench_cmd(dir, {"baseline", "--dir", bad, command});
      EXPECT_EQ(o.code, 2) << command << " --dir '" << bad << "': " << o.out << o.err;
    }
  }
  const auto o = tipbench_cmd(dir, {"baseline", "--dir", store, "save", run, "--name", std::string(100000, 'a')});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_LT(o.err.size(), 1000u) << "the name is abbreviated in the message";
  EXPECT_TRUE(contains(o.err, "(100000 bytes)")) << o.err;
}

// Files are filed and found by slug: a file whose slug is not its fingerprint's (edited, or made
// elsewhere) is exit 2 naming both, in every gate mode and when stored; --paired needs one machine.
TEST(GateCli, ASlugThatContradictsItsFingerprintIsExitTwoNamingBoth) {
  const auto dir = fresh_scratch_dir("gate_cli_slug_identity");
  auto lying = synthetic_run({.seed = 1});
  lying.context.fingerprint_slug = "nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0";
  const auto base = save(dir, "base.json", lying);
  const auto cur = save(dir, "cur.json", synthetic_run({.seed = 2}));
  for (const auto& extra : std::vector<std::vector<std::string>>{{}, {"--across-software"}, {"--paired"}}) {
    std::vector<std::string> args{"gate", "--baseline", base, "--current", cur, "--no-rerun"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto o = tipbench_cmd(dir, args);
    EXPECT_EQ(o.code, 2) << (extra.empty() ? "stored" : extra[0]) << ": " << o.out << o.err;
    EXPECT_TRUE(contains(o.err, "its slug says nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0")) << o.err;
    EXPECT_TRUE(contains(o.err, "its fingerprint gives cpu-test-2c_torch2.11.0")) << o.err;
  }
  const auto stored = tipbench_cmd(dir, {"baseline", "--dir", (dir / "b").string(), "save", base});
  EXPECT_EQ(stored.code, 2) << stored.err;
  EXPECT_TRUE(contains(stored.err, "its slug says")) << stored.err;
  const auto other = save(dir, "other.json", synthetic_run({.cpu_model = "Another CPU", .seed = 3}));
  const auto paired = tipbench_cmd(dir, {"gate", "--baseline", other, "--current", cur, "--paired", "--no-rerun"});
  EXPECT_EQ(paired.code, 2) << paired.out << paired.err;
  EXPECT_TRUE(contains(paired.err, "--paired")) << paired.err;
  EXPECT_TRUE(contains(paired.err, "other hardware")) << paired.err;
}

// A CI runner cancelling a job signals the gate alone. The gate passes SIGTERM or SIGINT on to
// the `run` it is waiting for, waits for it to stop, and dies of the same signal: no child is
// left measuring. The children here are a stand-in that records the signal it got.
TEST(GateCli, ASignalToTheGateAloneStopsItsChildToo) {
  for (const int signal_number : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
    const auto dir = fresh_scratch_dir(signal_number == SIGTERM ? "gate_cli_sigterm" : "gate_cli_sigint");
    const auto fake = dir / "fake-tipbench";
    write_bytes(fake,
                "#!/bin/sh\n"
                "case \" $* \" in *\" --dry-run \"*) exit 0;; esac\n"
                "echo $$ > '" +
                    (dir / "child.pid").string() +
                    "'\n"
                    "sleep 60 &\n"
                    "trap 'echo got > \"" +
                    (dir / "child.sig").string() +
                    "\"; kill $!; exit 143' TERM INT\n"
                    "wait $!\n");
    ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
    tipbench::testing::RunningChild gate({TIPBENCH_BINARY, "gate", "--base-binary", fake.string(), "--head-binary",
                                          fake.string(), "--blocks", "3", "--out-dir", (dir / "o").string()},
                                         dir);
    ASSERT_TRUE(gate.started());
    ASSERT_TRUE(gate.wait_for_file(dir / "child.pid", std::chrono::seconds(30)));
    const pid_t child = std::stoi(read_bytes(dir / "child.pid"));
    ::kill(gate.pid(), signal_number);
    ASSERT_TRUE(gate.wait(std::chrono::seconds(20)));
    EXPECT_TRUE(gate.signaled());
    EXPECT_EQ(gate.signal(), signal_number);
    EXPECT_TRUE(fs::exists(dir / "child.sig")) << "the child got the signal";
    EXPECT_EQ(::kill(child, 0), -1) << "the child is gone";
    EXPECT_TRUE(contains(read_bytes(dir / "stderr.txt"), "gate: interrupted by")) << read_bytes(dir / "stderr.txt");
  }
}

// Each binary checks the arguments it will be given (`run --dry-run`) before block 0: a flag or
// value it refuses is the user's (exit 2, naming it), found before anything is measured.
TEST(GateCli, ChildArgumentsAreCheckedBeforeTheFirstBlock) {
  for (const auto& bad :
       std::vector<std::vector<std::string>>{{"--run-arg=--bogus"}, {"--model", "bogus"}, {"--device", "bogus"}}) {
    SCOPED_TRACE(bad.front());
    const auto dir = fresh_scratch_dir("gate_cli_dry_run");
    std::vector<std::string> args{"gate",          "--base-binary",     TIPBENCH_BINARY,
                                  "--head-binary", TIPBENCH_BINARY,     "--suite",
                                  "zero_grad",     "--blocks",          "3",
                                  "--out-dir",     (dir / "o").string()};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto o = tipbench_cmd(dir, args);
    EXPECT_EQ(o.code, 2) << o.out << o.err;
    EXPECT_TRUE(contains(o.err, "refuses its run arguments")) << o.err;
    for (const auto& name : tipbench::testing::list_dir(dir / "o")) {
      EXPECT_EQ(name.find("session-"), std::string::npos) << "a block ran: " << name;
    }
  }
}

// A binary that is a directory (root may "execute" one) is not a binary.
TEST(GateCli, ABinaryThatIsADirectoryIsExitTwo) {
  const auto dir = fresh_scratch_dir("gate_cli_dir_binary");
  const auto o = tipbench_cmd(dir, {"gate", "--base-binary", TIPBENCH_BINARY, "--head-binary", dir.string(),
                                    "--out-dir", (dir / "o").string()});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "is not an executable file")) << o.err;
}

// A child run that fails, is killed or leaves no readable result is the gate's failure, not the
// user's input: exit 4, one line naming the child's log, and the last line says the code.
TEST(GateCli, ChildFailuresAreExitFourNamingTheLog) {
  for (const auto& [what, body] :
       std::vector<std::pair<std::string, std::string>>{{"no result", "exit 1"},
                                                        {"garbage", "echo garbage > \"$out\"; exit 0"},
                                                        {"exit 3", "echo 'error: something broke' >&2; exit 3"},
                                                        {"killed", "kill -9 $$"}}) {
    SCOPED_TRACE(what);
    const auto dir = fresh_scratch_dir("gate_cli_child_failure");
    const auto fake = dir / "fake-tipbench";
    write_bytes(fake,
                "#!/bin/sh\n"
                "case \" $* \" in *\" --dry-run \"*) exit 0;; esac\n"
                "out=; prev=; for a in \"$@\"; do [ \"$prev\" = --out ] && out=$a; prev=$a; done\n" +
                    body + "\n");
    ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
    const auto o = tipbench_cmd(dir, {"gate", "--base-binary", fake.string(), "--head-binary", fake.string(),
                                      "--blocks", "3", "--out-dir", (dir / "o").string()});
    EXPECT_EQ(o.code, 4) << o.out << o.err;
    EXPECT_TRUE(contains(o.err, ".log")) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 2) << "the start line and one error line: " << o.err;
    EXPECT_TRUE(contains(o.out, "Result is: ERROR (exit 4)")) << o.out;
  }
}

// A flag of the other mode would be ignored without a word: refused, saying where it belongs.
TEST(GateCli, FlagsOfTheOtherModeAreRefused) {
  const auto dir = fresh_scratch_dir("gate_cli_mode_flags");
  auto o = tipbench_cmd(dir, {"gate", "--base-binary", TIPBENCH_BINARY, "--head-binary", TIPBENCH_BINARY,
                              "--across-software", "--out-dir", (dir / "o").string()});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "--across-software applies to a stored baseline")) << o.err;
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  o = tipbench_cmd(dir, {"gate", "--baseline", a, "--current", a, "--suite", "zero_grad"});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "--suite applies to an interleaved session")) << o.err;
}

// `gate --counts`: head vs base (one binary twice, an A/A), counted work only: one block a side,
// no time check, every count equal, exit 0; its mode's exclusions are exit 2 with the reason.
TEST(GateCli, CountsAloneGateAnAAOnTheirOwnRule) {
  const auto dir = fresh_scratch_dir("gate_cli_counts");
  const auto json = (dir / "gate.json").string();
  const auto o =
      tipbench_cmd(dir, {"gate", "--base-binary", TIPBENCH_BINARY, "--head-binary", TIPBENCH_BINARY, "--counts",
                         "--suite", "zero_grad", "--out-dir", (dir / "o").string(), "--json", json});
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_TRUE(contains(o.err, "counted work only (one block a side)")) << o.err;
  const auto verdict = nlohmann::json::parse(read_bytes(json));
  EXPECT_TRUE(verdict.at("checks").empty()) << "no time check";
  EXPECT_TRUE(verdict.at("count_checks").empty()) << verdict.at("count_checks").dump();
  EXPECT_GE(verdict.at("count_checks_equal").get<int>(), 6) << "zero_grad's two arms, three counts each";
  for (const auto& extra : std::vector<std::string>{"--blocks", "--explain"}) {
    std::vector<std::string> args{
        "gate", "--base-binary", TIPBENCH_BINARY, "--head-binary", TIPBENCH_BINARY, "--counts", extra};
    if (extra == "--blocks") args.push_back("5");
    const auto bad = tipbench_cmd(dir, args);
    EXPECT_EQ(bad.code, 2) << extra << ": " << bad.err;
  }
  const auto a = save(dir, "a.json", synthetic_run({.seed = 1}));
  const auto stored = tipbench_cmd(dir, {"gate", "--baseline", a, "--current", a, "--counts"});
  EXPECT_EQ(stored.code, 2) << stored.err;
  EXPECT_TRUE(contains(stored.err, "--counts applies to an interleaved session")) << stored.err;
}

// The count gate's knob: a head that makes one more aten::add a step (--head-inject-extra-ops 1)
// FAILs the count gate by its exact ops rule, naming the op, with no time check at all; such a run
// is never a baseline.
TEST(GateCli, OneExtraOpAStepFailsTheCountGate) {
  const auto dir = fresh_scratch_dir("gate_cli_counts_knob");
  const auto json = (dir / "gate.json").string();
  const auto o = tipbench_cmd(
      dir, {"gate", "--base-binary", TIPBENCH_BINARY, "--head-binary", TIPBENCH_BINARY, "--counts",
            "--head-inject-extra-ops", "1", "--suite", "zero_grad", "--out-dir", (dir / "o").string(), "--json", json});
  ASSERT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_TRUE(contains(o.out + o.err, "INJECTED extra ops")) << o.out << o.err;
  const auto verdict = nlohmann::json::parse(read_bytes(json));
  EXPECT_TRUE(verdict.at("checks").empty()) << "no time check";
  int ops_failures = 0;
  for (const auto& c : verdict.at("count_checks")) {
    if (c.at("metric") != "top_level_ops_per_step" && c.at("metric") != "ops_per_step") continue;
    EXPECT_EQ(c.at("status"), "FAIL") << c.dump();
    EXPECT_EQ(c.at("current").get<double>() - c.at("baseline").get<double>(), 1) << c.dump();
    EXPECT_TRUE(contains(c.at("detail").get<std::string>(), "aten::add ")) << c.dump();
    ++ops_failures;
  }
  EXPECT_GE(ops_failures, 2) << "zero_grad's two arms: " << verdict.at("count_checks").dump();
  const auto saved =
      tipbench_cmd(dir, {"baseline", "--dir", (dir / "b").string(), "save", (dir / "o" / "head.json").string()});
  EXPECT_EQ(saved.code, 2) << saved.err;
  EXPECT_TRUE(contains(saved.err, "--inject-extra-ops 1")) << saved.err;
}

TEST(GateCli, NoStoredBaselineForThisFingerprintIsInconclusive) {
  const auto dir = fresh_scratch_dir("gate_cli_auto_none");
  const auto cur = save(dir, "cur.json", synthetic_run({}));
  const auto o =
      tipbench_cmd(dir, {"gate", "--baseline", "auto", "--current", cur, "--baselines-dir", (dir / "b").string()});
  EXPECT_EQ(o.code, 3);
  EXPECT_TRUE(contains(o.err, "no stored baseline for fingerprint cpu-test-2c_torch2.11.0")) << o.err;
}

TEST(GateCli, ACorruptStoredBaselineIsNamedNeverTakenForNone) {
  const auto dir = fresh_scratch_dir("gate_cli_auto_corrupt");
  const auto store = dir / "b";
  const auto cur = save(dir, "cur.json", synthetic_run({}));
  const auto stored = store / "cpu-test-2c_torch2.11.0" / "baseline.json";
  fs::create_directories(stored.parent_path());
  const std::string text = read_bytes(cur);
  write_bytes(stored, text.substr(0, text.size() / 3));  // truncated
  auto o = tipbench_cmd(dir, {"gate", "--baseline", "auto", "--current", cur, "--baselines-dir", store.string()});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, stored.string())) << o.err;
  EXPECT_FALSE(contains(o.err, "no stored baseline")) << o.err;
  o = tipbench_cmd(dir, {"baseline", "--dir", store.string(), "find", "--slug", "cpu-test-2c_torch2.11.0"});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, stored.string())) << o.err;
  // A corrupt baseline of another fingerprint does not stop this one's gate.
  const auto other = store / "cpu-other_torch2.11.0" / "baseline.json";
  fs::create_directories(other.parent_path());
  write_bytes(other, "{");
  fs::remove(stored);
  o = tipbench_cmd(dir, {"gate", "--baseline", "auto", "--current", cur, "--baselines-dir", store.string()});
  EXPECT_EQ(o.code, 3) << o.err;
}

TEST(GateCli, BaselineSaveThenAutoLookupPasses) {
  const auto dir = fresh_scratch_dir("gate_cli_auto");
  const auto store = (dir / "baselines").string();
  const auto base = save(dir, "base.json", synthetic_run({.cv = 0.005, .seed = 1}));
  const auto cur = save(dir, "cur.json", synthetic_run({.cv = 0.005, .seed = 2}));
  const auto s = tipbench_cmd(dir, {"baseline", "--dir", store, "save", base});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto stored = dir / "baselines" / "cpu-test-2c_torch2.11.0" / "baseline.json";
  EXPECT_EQ(read_bytes(stored), read_bytes(base));  // byte for byte
  const auto l = tipbench_cmd(dir, {"baseline", "--dir", store, "list"});
  EXPECT_EQ(l.code, 0);
  EXPECT_TRUE(contains(l.out, "cpu-test-2c_torch2.11.0")) << l.out;
  const auto f = tipbench_cmd(dir, {"baseline", "--dir", store, "find", "--slug", "cpu-test-2c_torch2.11.0"});
  EXPECT_EQ(f.code, 0);
  EXPECT_TRUE(contains(f.out, stored.string())) << f.out;
  EXPECT_EQ(tipbench_cmd(dir, {"baseline", "--dir", store, "find", "--slug", "nope"}).code, 3);
  const auto g = tipbench_cmd(dir, {"gate", "--baseline", "auto", "--current", cur, "--baselines-dir", store});
  EXPECT_EQ(g.code, 0) << g.out << g.err;
}

// A GPU campaign stores one baseline per suite (a device call runs a few suites): auto takes the
// newest that holds the current run's suites, not the newest file; `baseline find --suite` agrees.
TEST(GateCli, AutoTakesTheNewestBaselineHoldingTheRunsSuites) {
  const auto dir = fresh_scratch_dir("gate_cli_auto_per_suite");
  const auto store = (dir / "b").string();
  const auto tf32 =
      save(dir, "tf32.json",
           synthetic_run({.suites = {"tf32"}, .cv = 0.005, .seed = 1, .timestamp = "2026-11-26T01:00:00Z"}));
  const auto graphs =
      save(dir, "graphs.json",
           synthetic_run({.suites = {"cuda_graphs"}, .cv = 0.005, .seed = 3, .timestamp = "2026-11-26T02:00:00Z"}));
  ASSERT_EQ(tipbench_cmd(dir, {"baseline", "--dir", store, "save", tf32, "--name", "tf32"}).code, 0);
  ASSERT_EQ(tipbench_cmd(dir, {"baseline", "--dir", store, "save", graphs, "--name", "cuda_graphs"}).code, 0);
  const auto cur = save(dir, "cur.json", synthetic_run({.suites = {"tf32"}, .cv = 0.005, .seed = 2}));
  const auto g = tipbench_cmd(dir, {"gate", "--baseline", "auto", "--current", cur, "--baselines-dir", store});
  EXPECT_EQ(g.code, 0) << g.out << g.err;
  EXPECT_TRUE(contains(g.err, "/tf32.json")) << g.err;
  const std::string slug = "cpu-test-2c_torch2.11.0";
  EXPECT_TRUE(
      contains(tipbench_cmd(dir, {"baseline", "--dir", store, "find", "--slug", slug}).out, "/cuda_graphs.json"));
  const auto f = tipbench_cmd(dir, {"baseline", "--dir", store, "find", "--slug", slug, "--suite", "tf32"});
  EXPECT_EQ(f.code, 0);
  EXPECT_TRUE(contains(f.out, "/tf32.json")) << f.out;

  // The two runs of one machine as one findings page; runs of two machines are refused.
  const auto r = tipbench_cmd(
      dir, {"report", "--one-machine", tf32, graphs, "--out", (dir / "page").string(), "--format", "markdown"});
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string md = read_bytes(dir / "page" / "summary.md");
  EXPECT_TRUE(contains(md, "run 2 runs") && contains(md, "- `tf32.json`") && contains(md, "| tf32/") &&
              contains(md, "| cuda_graphs/"))
      << md;
  const auto other = save(dir, "other.json", synthetic_run({.cpu_model = "Another CPU", .suites = {"amp"}}));
  const auto refused = tipbench_cmd(dir, {"report", "--one-machine", tf32, other, "--out", (dir / "page2").string()});
  EXPECT_EQ(refused.code, 2);
  EXPECT_TRUE(contains(refused.err, "runs of two machines")) << refused.err;
  EXPECT_FALSE(fs::exists(dir / "page2" / "summary.md"));
}

TEST(GateCli, BaselineSaveNeverOverwritesWithoutForceAndRefusesInjectedRuns) {
  const auto dir = fresh_scratch_dir("gate_cli_save");
  const auto store = (dir / "baselines").string();
  const auto first = save(dir, "first.json", synthetic_run({.seed = 1}));
  const auto second = save(dir, "second.json", synthetic_run({.seed = 2}));
  ASSERT_EQ(tipbench_cmd(dir, {"baseline", "--dir", store, "save", first}).code, 0);
  const auto stored = dir / "baselines" / "cpu-test-2c_torch2.11.0" / "baseline.json";
  const auto again = tipbench_cmd(dir, {"baseline", "--dir", store, "save", second});
  EXPECT_EQ(again.code, 2);
  EXPECT_TRUE(contains(again.err, "--force")) << again.err;
  EXPECT_EQ(read_bytes(stored), read_bytes(first));
  EXPECT_EQ(tipbench_cmd(dir, {"baseline", "--dir", store, "save", second, "--force"}).code, 0);
  EXPECT_EQ(read_bytes(stored), read_bytes(second));
  auto injected = synthetic_run({.seed = 3});
  injected.context.settings.inject_slowdown_pct = 5;
  const auto inj =
      tipbench_cmd(dir, {"baseline", "--dir", store, "save", save(dir, "inj.json", injected), "--name", "x"});
  EXPECT_EQ(inj.code, 2);
  EXPECT_TRUE(contains(inj.err, "never a baseline")) << inj.err;
  EXPECT_EQ(tipbench_cmd(dir, {"baseline", "--dir", store, "save", first, "--name", "../evil"}).code, 2);
}

TEST(GateCli, MissingSuitesInTheBaselineAreInconclusive) {
  const auto dir = fresh_scratch_dir("gate_cli_missing");
  const auto base = save(dir, "base.json", synthetic_run({.suites = {"zero_grad"}, .cv = 0.005, .seed = 1}));
  const auto cur = save(dir, "cur.json", synthetic_run({.suites = {"zero_grad", "conv_bias"}, .cv = 0.005, .seed = 2}));
  const auto o = tipbench_cmd(dir, {"gate", "--baseline", base, "--current", cur});
  EXPECT_EQ(o.code, 3) << o.out;
  EXPECT_TRUE(contains(o.out, "conv_bias is not in the baseline")) << o.out;
}

TEST(GateCli, UsageErrorsAreExitTwo) {
  const auto dir = fresh_scratch_dir("gate_cli_usage");
  const auto cur = save(dir, "cur.json", synthetic_run({}));
  EXPECT_EQ(tipbench_cmd(dir, {"gate", "--current", cur}).code, 2);
  EXPECT_EQ(tipbench_cmd(dir, {"gate", "--base-binary", TIPBENCH_BINARY}).code, 2);
  EXPECT_EQ(tipbench_cmd(dir, {"gate", "--base-binary", "/nonexistent", "--head-binary", TIPBENCH_BINARY}).code, 2);
  EXPECT_EQ(tipbench_cmd(dir, {"gate", "--paired", "--baseline", "auto", "--current", cur}).code, 2);
  write_bytes(dir / "cfg.json", R"({"thresholds": {}})");
  const auto c =
      tipbench_cmd(dir, {"gate", "--baseline", cur, "--current", cur, "--config", (dir / "cfg.json").string()});
  EXPECT_EQ(c.code, 2);
  EXPECT_TRUE(contains(c.err, "unknown key 'thresholds'")) << c.err;
  write_bytes(dir / "cfg2.json", R"({"suites": {"no_such_suite": {}}})");
  EXPECT_EQ(
      tipbench_cmd(dir, {"gate", "--baseline", cur, "--current", cur, "--config", (dir / "cfg2.json").string()}).code,
      2);
}

TEST(ReportCli, WritesHtmlMarkdownAndGbench) {
  const auto dir = fresh_scratch_dir("report_cli");
  const auto base = save(dir, "base.json", synthetic_run({.cv = 0.01, .seed = 1}));
  const auto cur = save(dir, "cur.json", synthetic_run({.cv = 0.01, .seed = 2}));
  const auto out = dir / "report";
  const auto o = tipbench_cmd(dir, {"report", cur, "--baseline", base, "--out", out.string(), "--format", "all"});
  if (o.code == 2 && contains(o.err, "libjs-chart.js")) GTEST_SKIP() << "libjs-chart.js is not installed";
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string html = read_bytes(out / "report.html");
  EXPECT_TRUE(contains(html, "Chart.js v3")) << "Chart.js is inlined";
  EXPECT_TRUE(contains(read_bytes(out / "summary.md"), "### tipbench comparison"));
  EXPECT_TRUE(nlohmann::json::parse(read_bytes(out / "cur.gbench.json")).contains("benchmarks"));
  EXPECT_TRUE(nlohmann::json::parse(read_bytes(out / "baseline-base.gbench.json")).contains("benchmarks"));
}

TEST(ReportCli, MissingChartJsIsExitTwoAndWritesNothing) {
  const auto dir = fresh_scratch_dir("report_cli_nochart");
  const auto cur = save(dir, "cur.json", synthetic_run({}));
  const auto o = tipbench_cmd(dir, {"report", cur, "--out", (dir / "out").string(), "--chartjs", "/nonexistent.js"});
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(contains(o.err, "libjs-chart.js")) << o.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// The whole path on real runs, kept tiny: 3 interleaved blocks of the quick zero_grad suite per
// side (small_cnn at batch 4), the head slowed 5x (--head-inject-slowdown 400) so that even a busy CI machine cannot
// hide it; the candidate is re-measured (3 more blocks) and the gate fails with exit 1.
TEST(GateCli, InterleavedGateCatchesAnInjectedSlowdownEndToEnd) {
  const auto dir = fresh_scratch_dir("gate_cli_e2e");
  // One intra-op thread: with two, an OpenMP barrier waiting on a preempted thread turns a busy
  // machine's noise from about 10% into 100%+ per trial (measured; docs/gate.md). The children
  // inherit this environment.
  ::setenv("OMP_NUM_THREADS", "1", 1);
  const auto o =
      tipbench_cmd(dir, {"gate", "--base-binary", TIPBENCH_BINARY, "--head-binary", TIPBENCH_BINARY, "--suite",
                         "zero_grad", "--device", "cpu", "--blocks", "3", "--run-arg=--batch-size=4",
                         "--head-inject-slowdown", "400", "--out-dir", (dir / "gate").string()});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_TRUE(contains(o.out, "confirmed on re-run")) << o.out;
  EXPECT_TRUE(contains(o.out, "INJECTED slowdown of 400%")) << o.out;
  EXPECT_TRUE(fs::exists(dir / "gate" / "head.json"));
  EXPECT_TRUE(fs::exists(dir / "gate" / "gate.md"));
  const auto head = tipbench::read_result((dir / "gate" / "head.json").string());
  EXPECT_EQ(head.context.settings.inject_slowdown_pct, 400);
  EXPECT_EQ(head.suites.at(0).cases.at(0).arms.at(0).trials.size(), 3u);
  // The FAIL explains itself from its confirmation run, which recorded step breakdowns: the
  // injected busy-wait runs after each step, outside every op and phase (docs/explain.md), and is
  // the key that moved most. On CPU it is 400% of each step's own time, so on a busy machine its
  // noise is four times the step's and 3 pairs need not resolve it: the ranking then lists a
  // resolved key first (the CI machine: aten::mkldnn_convolution +0.40 ms [0.27, 0.53] above
  // [outside ops] +34.6 ms [-7.3, 76.4]), so the test asks for the largest delta, not the first row.
  EXPECT_TRUE(contains(o.out, "why (from its confirmation run):")) << o.out;
  EXPECT_TRUE(contains(o.out, "      step  [outside ops]  +")) << o.out;
  const auto verdict = tipbench::read_json_file((dir / "gate" / "gate.json").string(), "gate verdict");
  bool explained = false;
  for (const auto& check : verdict.at("checks")) {
    if (check.at("status") != "FAIL") continue;
    explained = true;
    EXPECT_TRUE(check.at("why").at("from_confirmation_run").get<bool>()) << check.dump();
    const auto& causes = check.at("why").at("causes");
    ASSERT_FALSE(causes.empty()) << check.dump();
    const auto delta = [](const nlohmann::json& c) { return std::abs(c.at("ms_per_step").at("delta").get<double>()); };
    const auto largest = *std::max_element(causes.begin(), causes.end(),
                                           [&](const auto& x, const auto& y) { return delta(x) < delta(y); });
    EXPECT_EQ(largest.at("op"), "[outside ops]") << check.dump();
    EXPECT_EQ(largest.at("phase"), "step") << check.dump();
  }
  EXPECT_TRUE(explained) << verdict.dump();
}

// Stack A/B: the pinned build (base) against the same code built with requirements-stack-b.txt's
// torch (head), interleaved on the quick zero_grad suite. Whatever the verdict, the gate must run
// both stacks and lead with the LibTorch change.
TEST(GateCli, StackABGatesTwoRealBuilds) {
  if (!is_executable_file(TIPBENCH_STACK_B_BINARY)) {
    GTEST_SKIP() << TIPBENCH_STACK_B_BINARY << " is not built: scripts/bootstrap.sh --torch " << TIPBENCH_STACK_B_TORCH
                 << " (make test does)";
  }
  const auto dir = fresh_scratch_dir("gate_cli_stack_ab");
  ::setenv("OMP_NUM_THREADS", "1", 1);  // as in the end-to-end gate above
  const auto o = tipbench_cmd(dir, {"gate", "--base-binary", TIPBENCH_BINARY, "--head-binary", TIPBENCH_STACK_B_BINARY,
                                    "--suite", "zero_grad", "--device", "cpu", "--blocks", "3",
                                    "--run-arg=--batch-size=4", "--no-rerun", "--out-dir", (dir / "gate").string()});
  EXPECT_TRUE(o.code == 0 || o.code == 1 || o.code == 3) << o.out << o.err;
  const std::string change = std::string("libtorch_version ") + TIPBENCH_PINNED_TORCH + " -> " + TIPBENCH_STACK_B_TORCH;
  // The wheels differ in more than LibTorch (its CUDA runtime, cuDNN, NCCL): all of it is listed.
  EXPECT_TRUE(contains(o.out, "change under test: ")) << o.out;
  EXPECT_TRUE(contains(o.out, change)) << o.out;
  const auto head = tipbench::read_result((dir / "gate" / "head.json").string());
  EXPECT_EQ(head.context.fingerprint.libtorch_version, TIPBENCH_STACK_B_TORCH);
  EXPECT_EQ(head.suites.at(0).cases.at(0).arms.at(0).trials.size(), 3u);
  const auto json = nlohmann::json::parse(read_bytes(dir / "gate" / "gate.json"));
  const auto& listed = json.at("change_under_test");
  EXPECT_NE(std::find(listed.begin(), listed.end(), change), listed.end()) << listed.dump();
}

}  // namespace
