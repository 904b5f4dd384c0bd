#include "reader_feed.h"

#include "tipbench/data/dataset.h"
#include "tipbench/gate/baseline_store.h"
#include "tipbench/gate/compare.h"
#include "tipbench/gate/gate_config.h"
#include "tipbench/partial_run.h"
#include "tipbench/result.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tipbench::fuzz {

namespace {

// The slug under which the baseline store keeps the fuzzed file (any safe name does).
constexpr const char* kSlug = "cpu-fuzz";

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    throw std::runtime_error("fuzz: cannot create " + path);
  }
}

// Not write_file_atomically: the harness's own writes are not under test, and a plain write is
// faster for thousands of cases. Unlinked first: ext4 flushes a file rewritten by truncation to
// disk when it is closed (auto_da_alloc), which made each case wait on the disk.
void write(const std::string& path, const std::string& bytes) {
  ::unlink(path.c_str());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("fuzz: cannot write " + path);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("fuzz: cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A result that parses goes on as compare and gate use it: serialised again, and compared cell by
// cell with itself (a short bootstrap: the values matter here, not the interval).
Outcome feed_result(const std::string& bytes, const std::string& dir) {
  make_dir(dir + "/result");
  const std::string path = dir + "/result/run.json";
  write(path, bytes);
  try {
    const Result r = read_result(path);
    (void)to_json_document(r).dump();
    (void)gate::compare_runs(r, r, {.resamples = 20});
    return Outcome::parsed;
  } catch (const InputError&) {
    return Outcome::rejected;
  }
}

// The store looks a baseline up by the run's fingerprint slug; the listing reports unreadable
// files instead of failing. Both walk the same directory.
Outcome feed_baseline(const std::string& bytes, const std::string& dir) {
  make_dir(dir + "/baselines");
  make_dir(dir + "/baselines/" + kSlug);
  write(dir + "/baselines/" + kSlug + "/main.json", bytes);
  std::vector<std::string> unreadable;
  const auto listed = gate::list_baselines(dir + "/baselines", &unreadable);
  if (listed.size() + unreadable.size() != 1) throw std::logic_error("fuzz: the listing lost the baseline");
  try {
    const auto found = gate::find_baseline(dir + "/baselines", kSlug);
    return found ? Outcome::parsed : Outcome::rejected;
  } catch (const InputError&) {
    return Outcome::rejected;
  }
}

Outcome feed_gate_config(const std::string& bytes, const std::string& dir) {
  make_dir(dir + "/gate");
  const std::string path = dir + "/gate/thresholds.json";
  write(path, bytes);
  try {
    const auto config = gate::read_gate_config(path);
    (void)gate::gate_config_to_json(config).dump();
    for (const auto& suite : config.suite_names()) (void)config.threshold_for(suite, "throughput_samples_per_s");
    return Outcome::parsed;
  } catch (const InputError&) {
    return Outcome::rejected;
  }
}

Outcome feed_manifest(const std::string& bytes, const std::string& dir) {
  make_dir(dir + "/dataset");
  write(dir + "/dataset/" + data::kManifestName, bytes);
  try {
    const auto manifest = data::read_manifest(dir + "/dataset");
    (void)data::manifest_to_json(manifest).dump();
    (void)manifest.total_bytes();
    return Outcome::parsed;
  } catch (const InputError&) {
    return Outcome::rejected;
  }
}

// `run --resume FILE`: the partial run file of an interrupted run (its result goes on as a result).
Outcome feed_partial_run(const std::string& bytes, const std::string& dir) {
  make_dir(dir + "/partial");
  const std::string path = dir + "/partial/run.json.partial";
  write(path, bytes);
  try {
    const PartialRun p = read_partial_run(path);
    (void)to_json_document(p.result).dump();
    (void)count_cases(p.result);
    return Outcome::parsed;
  } catch (const InputError&) {
    return Outcome::rejected;
  }
}

}  // namespace

const std::vector<Reader>& readers() {
  static const std::vector<Reader> all{
      {"result", "docs/examples/result-v1.json", feed_result},
      {"baseline", "docs/examples/result-v1.json", feed_baseline},
      {"gate_config", "ci/gate-thresholds.json", feed_gate_config},
      {"manifest", nullptr, feed_manifest},
      {"partial_run", nullptr, feed_partial_run},
  };
  return all;
}

std::string seed_manifest(const std::string& dir) {
  data::DatasetSpec spec;
  spec.images = 6;
  spec.width = 16;
  spec.height = 16;
  spec.classes = 3;
  data::make_dataset(dir, spec, {.threads = 1});
  return read(dir + "/" + data::kManifestName);
}

// A partial run file as `run` keeps it: the example result's first suite as the finished case
// and the options a --quick run records.
std::string seed_partial_run(const std::string& source_dir, const std::string& dir) {
  PartialRun p;
  p.out = "results/runs/x.json";
  p.run_options = nlohmann::json::parse(R"({"suites": ["all"], "models": [], "device": "auto", "batch_size": 0,
      "quick": true, "blocks": 0, "threshold_pct": 0, "out": "results/runs/x.json", "seed": 0,
      "inject_slowdown_pct": 0, "data_dir": "", "loader_only": false, "corrupt_policy": "skip", "nproc": 1,
      "oversubscribe": false, "bucket_mb": 25})");
  p.result = read_result(source_dir + "/docs/examples/result-v1.json");
  p.result.suites.resize(1);
  make_dir(dir);
  write_partial_run(p, dir + "/seed.partial");
  return read(dir + "/seed.partial");
}

std::string seed_bytes(const Reader& reader, const std::string& source_dir, const std::string& scratch_dir) {
  if (std::string(reader.name) == "partial_run") return seed_partial_run(source_dir, scratch_dir + "/seed_partial");
  if (reader.seed_file == nullptr) return seed_manifest(scratch_dir + "/seed_dataset");
  return read(source_dir + "/" + reader.seed_file);
}

}  // namespace tipbench::fuzz
