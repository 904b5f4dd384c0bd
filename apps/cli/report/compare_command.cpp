// `tipbench compare A.json B.json [C.json ...]`: side by side per suite/case/arm/metric, each later
// run against the first. Different fingerprints are allowed (comparing GPUs is a main use) and
// marked with the fields that differ.
#include "cli/commands.h"

#include "cli/shared/cli_checks.h"
#include "cli/shared/file_label.h"
#include "tipbench/common/atomic_file.h"
#include "tipbench/common/error_text.h"
#include "tipbench/gate/gate_config.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/common/json_number.h"
#include "tipbench/results/partial_run.h"
#include "tipbench/reports/comparison_report.h"

#include <fmt/format.h>

#include <memory>

namespace tipbench::cli {

namespace {

struct CompareFlags {
  std::vector<std::string> files;
  bool paired = false;
  double threshold_pct = 3;
  std::string format = "text";
  std::string out;
  std::uint64_t seed = 0;
  double between_run_pct = -1;  // < 0: the gate's floor for the reference run's device kind
};

nlohmann::json to_json(const std::vector<reports::NamedRun>& runs, const std::vector<gate::RunComparison>& all) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < all.size(); ++i) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& c : all[i].cells) {
      cells.push_back({{"suite", c.key.suite},
                       {"case", c.key.case_name},
                       {"arm", c.key.arm},
                       {"metric", c.key.metric},
                       {"reference_median", c.reference.median},
                       {"candidate_median", c.candidate.median},
                       {"ratio", c.test.estimate.ratio},
                       {"ci95_low", c.test.estimate.ci_low},
                       {"ci95_high", c.test.estimate.ci_high},
                       {"p_value", c.test.p_value},
                       {"cv", c.cv},
                       {"paired", c.paired},
                       {"between_run_sd", c.between_run_sd},
                       {"verdict", stats::to_string(c.verdict)}});
    }
    out.push_back({{"reference", runs[0].label},
                   {"candidate", runs[i + 1].label},
                   {"fingerprint_differences", all[i].fingerprint_differences},
                   {"cells", cells}});
  }
  return out;
}

int run_compare(const CompareFlags& f) {
  std::vector<reports::NamedRun> runs;
  try {
    for (const auto& path : f.files) runs.push_back({file_label(path), read_result_or_partial(path)});
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  }
  if (!f.out.empty() && !output_file_writable("--out", f.out)) return exit_code::usage;
  // Unpaired runs differ by more than their blocks show: the gate's floor for the device kind
  // (between_runs.h), unless --between-run-pct says otherwise.
  gate::BetweenRunSpread between_runs;
  between_runs.floor = f.between_run_pct >= 0
                           ? f.between_run_pct / 100
                           : gate::GateConfig{}.for_device(runs.front().result.context.device).between_runs.floor;
  const gate::CompareOptions options{
      .paired = f.paired, .seed = f.seed, .practical_threshold = f.threshold_pct / 100, .between_runs = &between_runs};
  std::string text;
  if (f.format == "markdown") {
    text = reports::comparison_markdown(runs, options);
  } else if (f.format == "json") {
    text = checked_dump(to_json(runs, reports::compare_to_reference(runs, options)), 2,
                        f.out.empty() ? std::string("the comparison") : f.out) +
           "\n";
  } else if (f.out.empty()) {
    reports::print_comparison(runs, options, stdout);
    return exit_code::ok;
  } else {
    char* buffer = nullptr;
    std::size_t size = 0;
    std::FILE* mem = ::open_memstream(&buffer, &size);
    reports::print_comparison(runs, options, mem);
    std::fclose(mem);
    text.assign(buffer, size);
    std::free(buffer);
  }
  if (f.out.empty()) {
    fmt::print("{}", text);
  } else {
    try {
      write_file_atomically(f.out, text);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: cannot write {}: {}\n", f.out, error_summary(e));
      return exit_code::internal;
    }
    fmt::print(stderr, "wrote {}\n", f.out);
  }
  return exit_code::ok;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto* sub = app.add_subcommand("compare", "Compare result files side by side (the first is the reference)");
  auto f = std::make_shared<CompareFlags>();
  sub->add_option("files", f->files, "Two or more result files")
      ->required()
      ->expected(2, 1000)
      ->check(CLI::ExistingFile);
  sub->add_flag("--paired", f->paired, "The runs come from one interleaved session: pair blocks by index");
  sub->add_option("--threshold", f->threshold_pct, "Practical threshold of a verdict, in percent")
      ->check(real_number(0.01, 100.0))
      ->capture_default_str();
  sub->add_option("--format", f->format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  sub->add_option("--out", f->out, "Write to this file instead of stdout")->check(not_a_flag());
  sub->add_option("--between-run-pct", f->between_run_pct,
                  "Unpaired runs: the relative SD of one run's level that no block shows, added to every change's "
                  "interval, in percent (default: the gate's floor, 0.5 on a GPU, none on a CPU; 0: none)")
      ->check(real_number(0, 50));
  sub->add_option("--seed", f->seed, "Bootstrap seed")->check(seed_value())->capture_default_str();
  return {sub, [f] { return run_compare(*f); }};
}

}  // namespace tipbench::cli
