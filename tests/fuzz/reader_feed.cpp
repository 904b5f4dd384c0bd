#include "reader_feed.h"

#include "tipbench/data/dataset.h"
#include "tipbench/gate/baseline_store.h"
#include "tipbench/gate/compare.h"
#include "tipbench/gate/gate_config.h"
#include "tipbench/results/partial_run.h"
#include "tipbench/results/recorded_options.h"
#include "tipbench/results/result.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tipbench::fuzz {

namespace {

// The slug under which the baseline store keeps the fuzzed file.
constexpr const char* kSlug = "cpu-amd-epyc-2c_torch2.11.0";  // the seed's own: a stored file sits under its slug

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

// What a partial file's options may name in the fuzzed build (the CLI's catalogue needs the
// registered suites, which link LibTorch): a few suites, models and declared options.
const RunOptionCatalogue& fuzz_catalogue() {
  static const RunOptionCatalogue catalogue{
      {"zero_grad", "conv_bias", "data_parallel", "dataloader"},
      {"small_cnn", "resnet18"},
      {SuiteOption{.name = "bucket-mb",
                   .type = OptionType::number,
                   .default_value = "25",
                   .help = "",
                   .min = 0.001,
                   .max = 4096},
       SuiteOption{.name = "corrupt-policy",
                   .type = OptionType::choice,
                   .default_value = "skip",
                   .help = "",
                   .choices = {"skip", "fail"}},
       SuiteOption{.name = "loader-only", .type = OptionType::flag, .default_value = "false", .help = ""},
       SuiteOption{.name = "data", .type = OptionType::text, .default_value = "", .help = ""}}};
  return catalogue;
}

// `run --resume FILE`: the partial run file of an interrupted run, its options read and checked as
// the command line's (its result goes on as a result), and then used as the run uses them.
Outcome feed_partial_run(const std::string& bytes, const std::string& dir) {
  make_dir(dir + "/partial");
  const std::string path = dir + "/partial/run.json.partial";
  write(path, bytes);
  try {
    const ResumeFile r = read_resume_file(path, fuzz_catalogue());
    (void)to_json_document(r.partial.result).dump();
    (void)count_cases(r.partial.result);
    (void)run_options_to_json(r.options).dump();
    (void)measure_settings_from(r.options);
    (void)run_option_differences(r.options, r.options, {"--suite", "--blocks", "--bucket-mb"});
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

// A partial run file as `run` keeps it: the example result's first suite as the finished case,
// the options a `--quick --suite zero_grad` run records, and the settings they give.
std::string seed_partial_run(const std::string& source_dir, const std::string& dir) {
  RunOptions options;
  options.suites = {"zero_grad"};
  options.quick = true;
  options.out = "results/runs/x.json";
  options.suite_options = {{"bucket-mb", "25"}, {"corrupt-policy", "skip"}, {"loader-only", "false"}, {"data", ""}};
  PartialRun p;
  p.out = options.out;
  p.run_options = run_options_to_json(options);
  p.result = read_result(source_dir + "/docs/examples/result-v1.json");
  p.result.suites.resize(1);
  p.result.context.settings = measure_settings_from(options);
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
