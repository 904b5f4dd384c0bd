// Damaged files at the command line: the real tipbench binary (a child process, so no LibTorch
// here) runs compare, report and gate with a handful of mutated result, baseline and gate-config
// files. A file that cannot be read ends in exit 2 and one line on stderr naming it; a file that
// still parses (a changed number, an emptied list) may pass, fail or be inconclusive, but never
// ends in a signal or an uncaught exception.
#include "mutations.h"

#include "child_process.h"
#include "scratch_dir.h"
#include "test_paths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#ifndef TIPBENCH_BINARY
#error "TIPBENCH_BINARY must name the tipbench executable"
#endif

namespace {

namespace fs = std::filesystem;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::write_bytes;

struct Damage {
  std::string name;
  std::string bytes;
};

std::string real_result() { return read_bytes(fs::path(TIPBENCH_SOURCE_DIR) / "docs/examples/result-v1.json"); }

std::string with(const std::string& where, const nlohmann::ordered_json& value) {
  auto j = nlohmann::ordered_json::parse(real_result());
  j.at(nlohmann::ordered_json::json_pointer(where)) = value;
  return j.dump(1);
}

// Results that cannot be read: each must be refused with exit 2.
std::vector<Damage> unreadable_results() {
  const std::string real = real_result();
  std::vector<Damage> out{
      {"empty", ""},
      {"truncated", real.substr(0, real.size() / 2)},
      {"binary", std::string("\x7f"
                             "ELF\x02\x01\x01\0\0\xff\xfe",
                             12)},
      {"not_an_object", "[1, 2, 3]"},
      {"newer_schema", with("/schema_version", "2.0")},
      {"integer_out_of_range", with("/suites/0/cases/0/arms/0/trials/0/samples_per_step", 1e300)},
      {"string_for_a_number", with("/suites/0/cases/0/arms/0/summary/step_time_ms/median", "fast")},
  };
  // Two seeded byte-level mutations that break the JSON (the corpus's kind of damage).
  for (const auto& m : tipbench::fuzz::mutations_of(real, {.seed = 5, .count = 40, .truncations = 0})) {
    if (out.size() >= 9) break;
    if (!nlohmann::json::accept(m.bytes)) out.push_back({"mutation: " + m.how, m.bytes});
  }
  return out;
}

// Results that still parse but hold odd values.
std::vector<Damage> odd_results() {
  return {
      {"no_trials", with("/suites/0/cases/0/arms/0/trials", nlohmann::ordered_json::array())},
      {"no_step_times", with("/suites/0/cases/0/arms/1/trials/0/step_times_ms", nlohmann::ordered_json::array())},
      {"zero_throughput", with("/suites/0/cases/0/arms/0/trials/1/throughput_samples_per_s", 0)},
      {"negative_block", with("/suites/0/cases/0/arms/0/trials/2/block", -7)},
      {"no_cases", with("/suites/0/cases", nlohmann::ordered_json::array())},
  };
}

struct Run {
  int code = -1;
  std::string err;
};

Run tipbench_cmd(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), TIPBENCH_BINARY);
  const auto child = tipbench::testing::run_child(args, dir / "stdout.txt", dir / "stderr.txt");
  return {child.code, child.err};
}

// Exit 2 with one line on stderr that names the file.
void expect_refused(const Run& r, const std::string& file, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(r.code, 2) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line:\n" << r.err;
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
}

// Any documented exit code (0 to 4), no signal, no uncaught exception.
void expect_no_crash(const Run& r, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_GE(r.code, 0);
  EXPECT_LE(r.code, 4) << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
}

std::string slug_of(const std::string& result_text) {
  return nlohmann::json::parse(result_text).at("context").at("fingerprint_slug").get<std::string>();
}

// Each damage through one command, in turn, so every command sees several kinds (each launch
// loads LibTorch: about a second).
TEST(ReaderFuzzCli, UnreadableResultsAreRefusedWithExitTwoAndOneLine) {
  const auto dir = fresh_scratch_dir("reader_fuzz_cli_unreadable");
  const auto good = (dir / "good.json").string();
  write_bytes(good, real_result());
  const auto store = dir / "baselines";
  const auto stored = (store / slug_of(real_result()) / "main.json").string();
  fs::create_directories(fs::path(stored).parent_path());
  const auto damages = unreadable_results();
  ASSERT_GE(damages.size(), 8u);
  for (std::size_t i = 0; i < damages.size(); ++i) {
    const auto& d = damages[i];
    const auto bad = (dir / "bad.json").string();
    write_bytes(bad, d.bytes);
    switch (i % 4) {
      case 0: expect_refused(tipbench_cmd(dir, {"compare", good, bad}), bad, "compare: " + d.name); break;
      case 1:
        expect_refused(tipbench_cmd(dir, {"report", bad, "--out", (dir / "report").string()}), bad,
                       "report: " + d.name);
        break;
      case 2:
        expect_refused(tipbench_cmd(dir, {"gate", "--baseline", bad, "--current", good}), bad, "gate: " + d.name);
        break;
      default:  // the same damage in the store that --baseline auto reads for this fingerprint
        write_bytes(stored, d.bytes);
        expect_refused(
            tipbench_cmd(dir, {"gate", "--baseline", "auto", "--baselines-dir", store.string(), "--current", good}),
            stored, "gate --baseline auto: " + d.name);
    }
  }
}

TEST(ReaderFuzzCli, DamagedGateConfigIsRefusedWithExitTwoAndOneLine) {
  const auto dir = fresh_scratch_dir("reader_fuzz_cli_config");
  const auto good = (dir / "good.json").string();
  write_bytes(good, real_result());
  const std::string config = read_bytes(fs::path(TIPBENCH_SOURCE_DIR) / "ci/gate-thresholds.json");
  const std::vector<Damage> damaged{
      {"truncated", config.substr(0, config.size() / 3)},
      {"threshold_out_of_range", R"({"metrics": {"throughput_samples_per_s": {"threshold_pct": 1e999}}})"},
      {"unknown_metric", R"({"metrics": {"bogus": {"threshold_pct": 3}}})"},
      {"alpha_string", R"({"alpha": "0.05"})"},
  };
  for (const auto& d : damaged) {
    const auto bad = (dir / "thresholds.json").string();
    write_bytes(bad, d.bytes);
    expect_refused(tipbench_cmd(dir, {"gate", "--baseline", good, "--current", good, "--config", bad}), bad,
                   "gate --config: " + d.name);
  }
}

TEST(ReaderFuzzCli, OddButReadableResultsNeverCrash) {
  const auto dir = fresh_scratch_dir("reader_fuzz_cli_odd");
  const auto good = (dir / "good.json").string();
  write_bytes(good, real_result());
  const auto odd = (dir / "odd.json").string();
  const auto damages = odd_results();
  for (std::size_t i = 0; i < damages.size(); ++i) {
    const auto& d = damages[i];
    write_bytes(odd, d.bytes);
    expect_no_crash(tipbench_cmd(dir, {"compare", good, odd, "--format", "json"}), "compare: " + d.name);
    if (i % 2 == 0) {
      expect_no_crash(tipbench_cmd(dir, {"report", odd, "--baseline", good, "--out", (dir / "report").string()}),
                      "report: " + d.name);
    } else {
      expect_no_crash(tipbench_cmd(dir, {"gate", "--baseline", odd, "--current", good}), "gate: " + d.name);
    }
  }
}

}  // namespace
