// The .pt2 reader on damaged archives (issue 48: a model file is input from elsewhere): seeded
// mutations (tests/fuzz/mutations.h) of a real archive's records that steer the reader — the train
// and eval graphs, the weights' and constants' configs (sizes, strides, offsets, dtypes) — each
// written back into a zip and loaded as `run --model-file` loads it (read, both programs prepared,
// the eval forward of the load check). Every case is loaded or refused with ModelFileError: never
// another exception, a crash, or an allocation the record does not hold. TIPBENCH_FUZZ_SEED and
// TIPBENCH_FUZZ_CASES draw other or more cases.
#include "tipbench/models/model_file.h"

#include "model_files.h"
#include "mutations.h"
#include "pt2_feed.h"
#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace tm_ = tipbench::models;
using tipbench::testing::model_files;

// A mutation may make a graph allocate (zeros of a huge size): with the address space capped a
// few GiB above what the process maps now, such an allocation fails (a refusal) instead of taking
// the machine's memory. The cap is lifted again when the test ends.
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(std::uint64_t headroom_bytes) {
    ::getrlimit(RLIMIT_AS, &before_);
    std::uint64_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    rlimit capped = before_;
    capped.rlim_cur = pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) + headroom_bytes;
    if (before_.rlim_max != RLIM_INFINITY && capped.rlim_cur > before_.rlim_max) capped.rlim_cur = before_.rlim_max;
    ::setrlimit(RLIMIT_AS, &capped);
  }
  ~AddressSpaceCap() { ::setrlimit(RLIMIT_AS, &before_); }
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

 private:
  rlimit before_{};
};

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(Pt2Fuzz, ADamagedArchiveIsLoadedOrRefusedNeverACrash) {
  ASSERT_TRUE(model_files().error.empty()) << model_files().error;
  const auto dir = tipbench::testing::fresh_scratch_dir("pt2_fuzz");
  auto seed = tipbench::fuzz::lean_records(tipbench::testing::read_bytes(model_files().path("tiny.pt2")));
  // A name of its own: the other tests of this process register tiny.pt2 under its own name.
  auto metadata = nlohmann::json::parse(seed.at("extra/tipbench.json"));
  metadata["name"] = "pt2_fuzz";
  seed["extra/tipbench.json"] = metadata.dump();
  std::vector<std::string> targets;
  for (const auto& [name, bytes] : seed) {
    if (name.ends_with(".json")) targets.push_back(name);
  }
  ASSERT_GE(targets.size(), 4u) << "two programs, their weights' and constants' configs";
  const std::string seed_path = (dir / "seed.pt2").string();
  tipbench::testing::write_bytes(seed_path, tipbench::fuzz::write_archive(seed));
  ASSERT_NO_THROW((void)tm_::inspect_model_file({.path = seed_path})) << "the unmutated archive must load";

  const AddressSpaceCap cap(std::uint64_t{4} << 30);
  const auto seed_number = env_number("TIPBENCH_FUZZ_SEED", 20261127);
  const int per_target = static_cast<int>(env_number("TIPBENCH_FUZZ_CASES", 500));
  int loaded = 0, refused = 0, escaped = 0;
  for (const auto& target : targets) {
    for (const auto& m :
         tipbench::fuzz::mutations_of(seed.at(target), {.seed = seed_number, .count = per_target, .truncations = 40})) {
      auto records = seed;
      records[target] = m.bytes;
      const std::string path = (dir / "case.pt2").string();
      tipbench::testing::write_bytes(path, tipbench::fuzz::write_archive(records));
      try {
        (void)tm_::inspect_model_file({.path = path});
        ++loaded;
      } catch (const tm_::ModelFileError& e) {
        ++refused;
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << target << ": " << m.how << ": " << e.what();
      } catch (const std::exception& e) {
        const auto kept = dir / ("escape_" + std::to_string(++escaped) + ".pt2");
        fs::copy_file(path, kept, fs::copy_options::overwrite_existing);
        ADD_FAILURE() << target << ": " << m.how << " (seed " << seed_number << "): " << e.what() << "; in "
                      << kept.string();
        if (escaped >= 10) return;
      }
    }
  }
  std::printf("pt2 fuzz: %zu records x %d mutations: %d loaded, %d refused\n", targets.size(), per_target, loaded,
              refused);
  EXPECT_GT(refused, 0);
}

}  // namespace
