// `tipbench report RUN.json [MORE.json ...] [--baseline B.json] [--history DIR] --out DIR`: a
// self-contained HTML report (Chart.js inlined), a Markdown summary for PR comments, and/or
// Google Benchmark JSON per run (--format gbench) for google/benchmark's tools/compare.py.
#include "cli/commands.h"

#include "cli/shared/cli_checks.h"
#include "cli/shared/file_label.h"
#include "tipbench/common/atomic_file.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/gate/baseline_store.h"
#include "tipbench/results/partial_run.h"
#include "tipbench/reports/comparison_report.h"
#include "tipbench/reports/gbench.h"
#include "tipbench/reports/html_report.h"
#include "tipbench/reports/run_set.h"

#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>

namespace tipbench::cli {

namespace {

struct ReportFlags {
  std::vector<std::string> files;
  std::string baseline;
  std::string history_dir;
  std::string out_dir;
  std::vector<std::string> formats{"html", "markdown"};
  std::string chartjs = reports::default_chartjs_path();
  std::string title = "tipbench report";
  bool paired = false;
  bool one_machine = false;
  double threshold_pct = 3;
};

// A file name from a run's label: lower-case, unsafe characters as '-'.
std::string stem_of(const std::string& label) {
  std::string s =
      label.size() > 5 && label.substr(label.size() - 5) == ".json" ? label.substr(0, label.size() - 5) : label;
  for (char& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!gate::is_safe_name(std::string(1, c))) c = '-';
  }
  return gate::is_safe_name(s) ? s : "run";
}

// stem, else stem-2, stem-3, ...: the first not yet taken (and now taken).
std::string unique_stem(const std::string& stem, std::set<std::string>& taken) {
  std::string candidate = stem;
  for (int n = 2; taken.contains(candidate); ++n) candidate = fmt::format("{}-{}", stem, n);
  taken.insert(candidate);
  return candidate;
}

// Every result file directly in dir, readable ones only (a history dir may hold other files).
std::vector<reports::NamedRun> load_history(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw InputError(dir + ": cannot open the history directory");
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  std::vector<reports::NamedRun> runs;
  for (const auto& n : names) {
    try {
      runs.push_back({n, read_result(dir + "/" + n)});
    } catch (const InputError& e) {
      fmt::print(stderr, "warning: history: skipping {}\n", e.what());
    }
  }
  return runs;
}

int run_report(const ReportFlags& f) {
  const std::set<std::string> formats(f.formats.begin(), f.formats.end());
  const bool all = formats.contains("all");
  std::vector<reports::NamedRun> runs;
  std::vector<reports::NamedRun> history;
  std::string chartjs;
  reports::HtmlOptions options{.title = f.title, .practical_threshold = f.threshold_pct / 100, .paired = f.paired};
  try {
    if (!f.baseline.empty()) {
      runs.push_back({"baseline " + file_label(f.baseline), read_result_or_partial(f.baseline)});
      options.primary = 1;
    }
    std::vector<reports::NamedRun> files;
    for (const auto& path : f.files) files.push_back({file_label(path), read_result_or_partial(path)});
    if (f.one_machine) {
      runs.push_back(reports::merge_runs_of_one_machine(files));
    } else {
      runs.insert(runs.end(), files.begin(), files.end());
    }
    if (!f.history_dir.empty()) history = load_history(f.history_dir);
    if (all || formats.contains("html")) chartjs = reports::read_chartjs(f.chartjs);
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  }
  if (!output_dir_writable("--out", f.out_dir)) return exit_code::usage;
  const gate::CompareOptions compare{.paired = f.paired, .practical_threshold = f.threshold_pct / 100};
  try {
    if (all || formats.contains("html")) {
      const auto model = reports::report_model(runs, history, options);
      const std::string path = f.out_dir + "/report.html";
      write_file_atomically(path, reports::render_html(model, runs, chartjs, f.out_dir));
      fmt::print("wrote {} ({} charts)\n", path, model.at("charts").size());
    }
    if (all || formats.contains("markdown")) {
      const std::string path = f.out_dir + "/summary.md";
      const std::string md =
          runs.size() >= 2 ? reports::comparison_markdown(runs, compare) : reports::run_markdown(runs[0]);
      write_file_atomically(path, md);
      fmt::print("wrote {}\n", path);
    }
    if (all || formats.contains("gbench")) {
      std::set<std::string> taken;  // two inputs named run.json must not share one output
      for (const auto& r : runs) {
        const std::string path = f.out_dir + "/" + unique_stem(stem_of(r.label), taken) + ".gbench.json";
        write_file_atomically(path, reports::to_gbench_json(r.result).dump(2) + "\n");
        fmt::print("wrote {}\n", path);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot write the report: {}\n", error_summary(e));
    return exit_code::internal;
  }
  return exit_code::ok;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("report", "Write an HTML report (charts), a Markdown summary and/or Google Benchmark JSON");
  auto f = std::make_shared<ReportFlags>();
  sub->add_option("files", f->files, "Result file(s): the run to report, then more runs to compare with it")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--baseline", f->baseline, "A baseline result: the report shows the runs' change against it")
      ->check(CLI::ExistingFile);
  sub->add_option("--history", f->history_dir,
                  "A directory of earlier results (e.g. results/baselines/<slug>) for trend charts")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--out", f->out_dir, "Output directory (created)")->required()->check(not_a_flag());
  sub->add_option("--format", f->formats, "html, markdown, gbench or all (repeatable; default html and markdown)")
      ->check(CLI::IsMember({"html", "markdown", "gbench", "all"}));
  sub->add_option("--chartjs", f->chartjs, "Chart.js UMD bundle to inline (Debian: libjs-chart.js)")
      ->capture_default_str();
  sub->add_option("--title", f->title, "Page title")->capture_default_str();
  sub->add_flag("--paired", f->paired, "The runs come from one interleaved session: pair blocks by index");
  sub->add_flag(
      "--one-machine", f->one_machine,
      "The files are one machine's runs of different suites (a campaign split over calls): report them as one run");
  sub->add_option("--threshold", f->threshold_pct, "Practical threshold of a verdict, in percent")
      ->check(real_number(0.01, 100.0))
      ->capture_default_str();
  return {sub, [f] { return run_report(*f); }};
}

}  // namespace tipbench::cli
