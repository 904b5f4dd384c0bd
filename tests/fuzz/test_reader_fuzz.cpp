// Every reader of a file from outside (result, stored baseline, gate config, dataset manifest)
// either parses a damaged file or refuses it with InputError (exit 2 at the command line): no
// other exception, no crash. The corpus is a few thousand seeded mutations of real files
// (truncations, bit flips, byte replacements, extreme numbers, values of another type, deleted
// and repeated spans); the same seed gives the same cases, so a failure names the case and keeps
// its bytes. TIPBENCH_FUZZ_SEED and TIPBENCH_FUZZ_CASES draw other or more cases; the same
// corpus runs under ASan/UBSan, and libFuzzer explores further, in scripts/fuzz-readers.sh.
#include "mutations.h"
#include "reader_feed.h"

#include "scratch_dir.h"
#include "test_paths.h"
#include "tipbench/data/dataset.h"
#include "tipbench/common/json_number.h"
#include "tipbench/results/result.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

namespace fuzz = tipbench::fuzz;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::write_bytes;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

const fuzz::Reader& reader(const std::string& name) {
  for (const auto& r : fuzz::readers()) {
    if (r.name == name) return r;
  }
  throw std::logic_error("no reader " + name);
}

// What escaped from feeding one case, or "" when it parsed or was refused with InputError.
std::string escape_of(const fuzz::Reader& r, const std::string& bytes, const std::string& dir, fuzz::Outcome* outcome) {
  try {
    *outcome = r.feed(bytes, dir);
    return "";
  } catch (const std::exception& e) {
    return std::string("an exception other than InputError: ") + e.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

void fuzz_reader(const std::string& name) {
  const auto& r = reader(name);
  const auto dir = fresh_scratch_dir(std::string("reader_fuzz_") + name);
  const std::string seed_file = fuzz::seed_bytes(r, TIPBENCH_SOURCE_DIR, dir.string());
  fuzz::Outcome outcome{};
  ASSERT_EQ(escape_of(r, seed_file, dir.string(), &outcome), "");
  ASSERT_EQ(outcome, fuzz::Outcome::parsed) << "the unmutated " << name << " file must parse";

  const auto seed = env_number("TIPBENCH_FUZZ_SEED", 20260411);
  const auto cases = static_cast<int>(env_number("TIPBENCH_FUZZ_CASES", 1500));
  const auto started = std::chrono::steady_clock::now();
  int parsed = 0, rejected = 0, escaped = 0;
  for (const auto& m : fuzz::mutations_of(seed_file, {.seed = seed, .count = cases})) {
    const std::string escape = escape_of(r, m.bytes, dir.string(), &outcome);
    if (escape.empty()) {
      (outcome == fuzz::Outcome::parsed ? parsed : rejected) += 1;
      continue;
    }
    // Keep the bytes, so the case can be replayed and added to the regression tests below.
    const auto kept = dir / ("escape_" + std::to_string(++escaped) + ".json");
    write_bytes(kept, m.bytes);
    ADD_FAILURE() << name << ": " << m.how << " (seed " << seed << "): " << escape << "; bytes in " << kept.string();
    if (escaped >= 20) break;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%s reader: %d cases parsed, %d refused with InputError, %d escaped, in %.2f s (seed %llu)\n",
              name.c_str(), parsed, rejected, escaped, seconds, static_cast<unsigned long long>(seed));
  // The corpus does damage: most cases are refused, and some still parse (a changed number).
  EXPECT_GT(rejected, parsed / 4) << name;
  EXPECT_GT(parsed, 0) << name;
}

TEST(ReaderFuzz, ResultReaderRefusesOrParsesEveryMutation) { fuzz_reader("result"); }
TEST(ReaderFuzz, BaselineStoreRefusesOrParsesEveryMutation) { fuzz_reader("baseline"); }
TEST(ReaderFuzz, GateConfigReaderRefusesOrParsesEveryMutation) { fuzz_reader("gate_config"); }
TEST(ReaderFuzz, ManifestReaderRefusesOrParsesEveryMutation) { fuzz_reader("manifest"); }
TEST(ReaderFuzz, PartialRunReaderRefusesOrParsesEveryMutation) { fuzz_reader("partial_run"); }

TEST(ReaderFuzz, MutationsAreReproducibleFromTheSeed) {
  const std::string text = R"({"a": [1, 2.5, -3], "b": {"c": "x"}})";
  const auto a = fuzz::mutations_of(text, {.seed = 7, .count = 50});
  const auto b = fuzz::mutations_of(text, {.seed = 7, .count = 50});
  ASSERT_EQ(a.size(), b.size());
  int changed = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].how, b[i].how);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    changed += a[i].bytes != text;
  }
  EXPECT_GT(changed, 45);
}

// ------------------------------------------------------------------------------------------
// The cases the fuzzing found, kept. Each parsed before its fix, as undefined behaviour (a double
// out of an integer's range cast to it: UBSan's report in scripts/fuzz-readers.sh), a silent wrap
// or a value that broke a later step; each is now refused with InputError.

// The seed file of `reader` with the value at JSON pointer `where` replaced by `value`.
std::string seed_with(const std::string& reader_name, const std::string& where, const nlohmann::ordered_json& value) {
  const auto dir = fresh_scratch_dir("reader_fuzz_seed_" + reader_name);
  auto j = nlohmann::ordered_json::parse(fuzz::seed_bytes(reader(reader_name), TIPBENCH_SOURCE_DIR, dir.string()));
  j.at(nlohmann::ordered_json::json_pointer(where)) = value;
  return j.dump(1);
}

// Parsed or refused with InputError (an escape fails the test with its message).
fuzz::Outcome feed(const std::string& reader_name, const std::string& bytes) {
  const auto dir = fresh_scratch_dir("reader_fuzz_case_" + reader_name);
  fuzz::Outcome outcome{};
  const std::string escape = escape_of(reader(reader_name), bytes, dir.string(), &outcome);
  EXPECT_EQ(escape, "");
  return outcome;
}

constexpr const char* kTrial = "/suites/0/cases/0/arms/0/trials/0";

TEST(ReaderFuzzFound, ResultIntegerOutOfRangeIsRefused) {
  // samples_per_step 18446744073709551616 parses as a double: casting it to int64 was UB.
  EXPECT_EQ(feed("result", seed_with("result", std::string(kTrial) + "/samples_per_step", 1.8446744073709552e19)),
            fuzz::Outcome::rejected);
  EXPECT_EQ(feed("result", seed_with("result", std::string(kTrial) + "/block", 1e300)), fuzz::Outcome::rejected);
  // -1 into a size_t wrapped to 18446744073709551615 blocks.
  EXPECT_EQ(feed("result", seed_with("result", "/suites/0/cases/0/comparisons/0/blocks", -1)), fuzz::Outcome::rejected);
  EXPECT_EQ(feed("result", seed_with("result", "/suites/0/cases/0/arms/0/summary/step_time_ms/n", -1)),
            fuzz::Outcome::rejected);
  EXPECT_EQ(feed("result", seed_with("result", std::string(kTrial) + "/memory/peak_rss_growth_bytes", 1e300)),
            fuzz::Outcome::rejected);
  // Through the settings and the fingerprint, read by their own from_json.
  EXPECT_EQ(feed("result", seed_with("result", "/context/settings/blocks", 1e300)), fuzz::Outcome::rejected);
  EXPECT_EQ(feed("result", seed_with("result", "/context/fingerprint/cpu_cores", -1e300)), fuzz::Outcome::rejected);
  EXPECT_EQ(feed("baseline", seed_with("baseline", std::string(kTrial) + "/position", 4294967296.0)),
            fuzz::Outcome::rejected);
  // A whole number written as a double still reads.
  EXPECT_EQ(feed("result", seed_with("result", std::string(kTrial) + "/samples_per_step", 32.0)),
            fuzz::Outcome::parsed);
}

TEST(ReaderFuzzFound, ResultRefusalNamesTheKey) {
  const auto dir = fresh_scratch_dir("reader_fuzz_message");
  const auto path = dir / "run.json";
  write_bytes(path, seed_with("result", std::string(kTrial) + "/samples_per_step", 1e300));
  try {
    (void)tipbench::read_result(path.string());
    ADD_FAILURE() << "no InputError";
  } catch (const tipbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"samples_per_step\": 1e+300 is not a whole number"), std::string::npos)
        << e.what();
  }
}

// A partial file's options are read as the command line's: what no flag could have given is
// refused, and so are options that disagree with the settings the kept cases were measured with.
TEST(ReaderFuzzFound, PartialRunOptionsAreCheckedAsTheFlagsAre) {
  EXPECT_EQ(feed("partial_run", seed_with("partial_run", "/run_options/blocks", 0)), fuzz::Outcome::parsed)
      << "the seed itself reads";
  for (const auto& [pointer, value] : std::vector<std::pair<std::string, nlohmann::ordered_json>>{
           {"/run_options/blocks", -5},
           {"/run_options/blocks", 1e300},
           {"/run_options/suites", nlohmann::ordered_json::array({"no_such_suite"})},
           {"/run_options/suites", nlohmann::ordered_json::array()},
           {"/run_options/threshold_pct", -3},
           {"/run_options/inject_slowdown_pct", 2000},
           {"/run_options/suite_options/bucket-mb", "nan"},
           {"/run_options/suite_options/corrupt-policy", "sometimes"},
           {"/run_options/device", "tpu"},
           {"/run_options/nproc", 0},
           {"/run_options/blocks", 4}}) {  // a valid number that is not the recorded settings' 6
    EXPECT_EQ(feed("partial_run", seed_with("partial_run", pointer, value)), fuzz::Outcome::rejected) << pointer;
  }
}

TEST(ReaderFuzzFound, ManifestThatARunCannotUseIsRefused) {
  // Sizes whose sum overflows int64 (Manifest::total_bytes was signed overflow).
  auto big = nlohmann::ordered_json::parse(seed_with("manifest", "/files/0/bytes", INT64_MAX));
  big["files"][1]["bytes"] = INT64_MAX;
  EXPECT_EQ(feed("manifest", big.dump()), fuzz::Outcome::rejected);
  EXPECT_EQ(feed("manifest", seed_with("manifest", "/files/0/bytes", -5)), fuzz::Outcome::rejected);
  EXPECT_EQ(feed("manifest", seed_with("manifest", "/files/0/label", 1e300)), fuzz::Outcome::rejected);
  // A spec out of range: classes sizes the model's output, images the batch check.
  EXPECT_EQ(feed("manifest", seed_with("manifest", "/spec/classes", 0)), fuzz::Outcome::rejected);
  EXPECT_EQ(feed("manifest", seed_with("manifest", "/spec/width", 1000000000)), fuzz::Outcome::rejected);
  EXPECT_EQ(feed("manifest", seed_with("manifest", "/spec/seed", -1)), fuzz::Outcome::rejected);
  // Fewer files than the spec's images: the suite checked the batch against spec.images.
  EXPECT_EQ(feed("manifest", seed_with("manifest", "/files", nlohmann::ordered_json::array())),
            fuzz::Outcome::rejected);
  EXPECT_EQ(feed("manifest", seed_with("manifest", "/spec/images", 1000)), fuzz::Outcome::rejected);
}

TEST(ReaderFuzzFound, MakeOverAManifestWithANonStringFormatIsAForeignManifest) {
  // {"format": 5} made make_dataset's foreign-manifest check throw nlohmann's type_error.
  const auto dir = fresh_scratch_dir("reader_fuzz_foreign");
  write_bytes(dir / tipbench::data::kManifestName, R"({"format": 5})");
  tipbench::data::DatasetSpec spec;
  spec.images = 2;
  spec.width = spec.height = 16;
  try {
    tipbench::data::make_dataset(dir.string(), spec, {.threads = 1});
    ADD_FAILURE() << "made a dataset over another tool's manifest";
  } catch (const tipbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a tipbench dataset manifest"), std::string::npos) << e.what();
  }
}

TEST(JsonInteger, RefusesWhatWouldWrapOrBeUndefined) {
  using nlohmann::json;
  using tipbench::json_integer_value;
  EXPECT_EQ(json_integer_value<int>(json(7)), 7);
  EXPECT_EQ(json_integer_value<int>(json(7.0)), 7);
  EXPECT_EQ(json_integer_value<std::int64_t>(json(-9007199254740992.0)), -9007199254740992);
  EXPECT_EQ(json_integer_value<std::uint64_t>(json(UINT64_MAX)), UINT64_MAX);
  EXPECT_EQ(json_integer_value<int>(json(INT32_MIN)), INT32_MIN);
  EXPECT_THROW(json_integer_value<int>(json(2147483648LL)), std::out_of_range);
  EXPECT_THROW(json_integer_value<int>(json(-2147483649.0)), std::out_of_range);
  EXPECT_THROW(json_integer_value<int>(json(1e300)), std::out_of_range);
  EXPECT_THROW(json_integer_value<int>(json(0.5)), std::out_of_range);
  EXPECT_THROW(json_integer_value<std::int64_t>(json(9223372036854775808.0)), std::out_of_range);  // 2^63
  EXPECT_THROW(json_integer_value<std::int64_t>(json(UINT64_MAX)), std::out_of_range);
  EXPECT_THROW(json_integer_value<std::uint64_t>(json(18446744073709551616.0)), std::out_of_range);  // 2^64
  EXPECT_THROW(json_integer_value<std::size_t>(json(-1)), std::out_of_range);
  EXPECT_THROW(json_integer_value<int>(json(true)), std::invalid_argument);
  EXPECT_THROW(json_integer_value<int>(json("3")), std::invalid_argument);
  EXPECT_THROW(json_integer_value<int>(json(nullptr)), std::invalid_argument);
}

}  // namespace
