// `tipbench history ingest RUN.json... | runs | detect [--confirm] | bisect | report`: the history
// store, its change points and their confirmation by our interleaved gate (docs/history.md).
#include "cli/commands.h"

#include "cli/shared/cli_checks.h"
#include "history_annotate.h"
#include "history_bisect.h"
#include "history_confirm.h"
#include "cli/shared/child_runs.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/common/atomic_file.h"
#include "tipbench/history/detect.h"
#include "tipbench/history/store.h"
#include "tipbench/history/trends.h"
#include "tipbench/reports/history_dashboard.h"
#include "tipbench/reports/html_report.h"
#include "tipbench/results/result.h"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>

namespace tipbench::cli {

namespace {

struct HistoryFlags {
  std::string store;  // "" until resolved: --store, $TIPBENCH_HISTORY_STORE, results/history.db
  std::vector<std::string> runs;
  history::DetectRequest detect;
  double min_change_pct = 1.0;
  std::string json_out, markdown_out;
  std::string report_dir, title = "tipbench history", chartjs;
  std::size_t recent_points = 200;
  bool confirm = false;
  bool record = false;
  history::ConfirmOptions builds;  // --confirm, bisect
  BisectRequest bisect;
  AnnotateFlags annotate;
};

// The device each run was measured on, for re-running its series.
std::string store_path(const HistoryFlags& f) {
  if (!f.store.empty()) return f.store;
  if (const char* env = std::getenv("TIPBENCH_HISTORY_STORE"); env && *env) return env;
  return "results/history.db";
}

// Opens the store, creating its folder (a reader: only one that exists); nullptr after saying why (exit 2).
std::unique_ptr<history::HistoryStore> open_store(
    const std::string& path, history::StoreOpening opening = history::StoreOpening::make_when_absent) {
  try {
    if (!history::is_postgres_url(path) && opening == history::StoreOpening::make_when_absent)
      std::filesystem::create_directories(std::filesystem::absolute(path).parent_path());
    return std::make_unique<history::HistoryStore>(path, opening);
  } catch (const history::StoreError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}: cannot open the history store: {}\n", history::mask_password(path),
               error_summary(e));
  }
  return nullptr;
}

// The store must exist for a read: a typo in --store is not an empty history.
std::unique_ptr<history::HistoryStore> open_existing_store(const std::string& path) {
  if (!history::is_postgres_url(path) && !std::filesystem::exists(path)) {
    fmt::print(stderr, "error: {}: no history store there (tipbench history ingest RUN.json makes one)\n", path);
    return nullptr;
  }
  return open_store(path, history::StoreOpening::existing_only);
}

int ingest(const HistoryFlags& f) {
  // Every file is read and checked before any is stored: a bad one in the list stores nothing.
  struct Loaded {
    std::string path, bytes;
    Result run;
  };
  std::vector<Loaded> loaded;
  for (const auto& path : f.runs) {
    try {
      std::ifstream in(path, std::ios::binary);
      std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      if (!in && !in.eof()) throw InputError(path + ": cannot be read");
      Result run = parse_result_text(bytes, path);
      loaded.push_back({path, std::move(bytes), std::move(run)});
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}; nothing was ingested\n", error_summary(e));
      return exit_code::usage;
    }
  }
  const std::string path = store_path(f);
  auto store = open_store(path);
  if (!store) return exit_code::usage;
  std::size_t stored = 0;
  for (const auto& [run, bytes, result] : loaded) {
    try {
      const auto o = store->ingest(bytes, result, run);
      stored += !o.already_stored;
      if (o.already_stored) {
        fmt::print("{}: already stored (run {}, sha256 {})\n", run, o.run_id, o.sha256.substr(0, 12));
      } else {
        fmt::print("{}: stored as run {}: {} series, {} samples\n", run, o.run_id, o.cells, o.samples);
      }
    } catch (const history::StoreError& e) {
      fmt::print(stderr, "error: {} (the runs before it are stored)\n", e.what());
      return exit_code::internal;
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}: {} (the runs before it are stored)\n", run, error_summary(e));
      return exit_code::internal;
    }
  }
  fmt::print("{} new of {} in {}\n", stored, f.runs.size(), history::mask_password(path));
  return exit_code::ok;
}

int list_runs(const HistoryFlags& f) {
  const std::string path = store_path(f);
  auto store = open_existing_store(path);
  if (!store) return exit_code::usage;
  try {
    const auto runs = store->runs();
    if (runs.empty()) fmt::print("no runs in {}\n", history::mask_password(path));
    for (const auto& r : runs) {
      fmt::print("{:>5}  {}  {}  {}  git {}  {} samples  sha256 {}\n", r.id, r.timestamp_utc, r.fingerprint_slug,
                 r.device, r.git_sha.empty() ? "-" : r.git_sha.substr(0, 12), r.samples, r.sha256.substr(0, 12));
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_summary(e));
    return exit_code::internal;
  }
  return exit_code::ok;
}

// detect --record: the change points found replace those kept for the series examined.
void record_change_points(history::HistoryStore& store, const std::vector<history::SeriesTrend>& trends,
                          const history::DetectReport& report) {
  std::vector<std::int64_t> examined;
  for (const auto& t : trends) examined.insert(examined.end(), t.series_ids.begin(), t.series_ids.end());
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char utc[32];
  std::strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
  store.replace_change_points(examined, history::stored_change_points(report, utc));
  fmt::print("recorded {} change point(s) of {} stored series in the store's change_points table\n",
             report.changes.size(), examined.size());
}

int detect(HistoryFlags& f) {
  const std::string path = store_path(f);
  if ((!f.json_out.empty() && !output_file_writable("--json", f.json_out)) ||
      (!f.markdown_out.empty() && !output_file_writable("--markdown", f.markdown_out))) {
    return exit_code::usage;
  }
  auto store = open_existing_store(path);
  if (!store) return exit_code::usage;
  f.detect.min_change_floor = f.min_change_pct / 100;
  try {
    const auto trends = history::read_trends(*store, f.detect.filter);
    const auto report = history::detect(trends, f.detect);
    fmt::print("{}", history::detect_console(report));
    if (f.record) record_change_points(*store, trends, report);
    if (!f.json_out.empty()) write_file_atomically(f.json_out, history::detect_json(report).dump(2) + "\n");
    if (!f.markdown_out.empty()) write_file_atomically(f.markdown_out, history::detect_markdown(report));
    if (f.confirm) {
      return with_child_runs("history",
                             [&] { return confirm_new_regressions(report, store->device_of_runs(), f.builds); });
    }
    return report.new_regressions() > 0 ? exit_code::failed : exit_code::ok;
  } catch (const history::StoreError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_summary(e));
  }
  return exit_code::internal;
}

int bisect(HistoryFlags& f) {
  if (!f.bisect.json_out.empty() && !output_file_writable("--json", f.bisect.json_out)) return exit_code::usage;
  auto store = open_existing_store(store_path(f));
  if (!store) return exit_code::usage;
  f.detect.min_change_floor = f.min_change_pct / 100;
  return with_child_runs("history", [&] {
    const auto report = history::detect(*store, f.detect);
    return bisect_regression(report, store->device_of_runs(), f.bisect, f.builds);
  });
}

// annotate / annotations: on a store that exists; exit 4 when it fails.
int with_existing_store(const HistoryFlags& f, const std::function<int(history::HistoryStore&)>& body) {
  auto store = open_existing_store(store_path(f));
  if (!store) return exit_code::usage;
  try {
    return body(*store);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_summary(e));
  }
  return exit_code::internal;
}

// The detector's flags, on detect and on bisect.
void add_detector_flags(CLI::App* command, HistoryFlags& f) {
  command->add_option("--series", f.detect.filter, "Only series whose \"suite/case/arm metric\" contains this text")
      ->check(not_a_flag());
  command->add_option("--window", f.detect.detector.window, "Runs per window (default 50)")
      ->check(whole_number(4, 100000));
  command->add_option("--p-value", f.detect.detector.max_p_value, "Largest p-value of a change point (default 0.001)")
      ->check(real_number(1e-12, 0.5));
  command
      ->add_option("--min-change", f.min_change_pct,
                   "Smallest change reported, in percent (default 1; a noisy series' own bound is larger)")
      ->check(real_number(0.0, 1000.0));
}

int report(HistoryFlags& f) {
  const std::string path = store_path(f);
  if (!output_dir_writable("--out", f.report_dir)) return exit_code::usage;
  std::string chartjs;
  try {
    chartjs = reports::read_chartjs(f.chartjs.empty() ? reports::default_chartjs_path() : f.chartjs);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_summary(e));
    return exit_code::usage;
  }
  auto store = open_existing_store(path);
  if (!store) return exit_code::usage;
  try {
    const auto trends = history::read_trends(*store, f.detect.filter);
    const auto changes = history::detect(trends, f.detect);
    const auto written = reports::write_history_dashboard(trends, changes, f.report_dir, chartjs,
                                                          {.title = f.title, .recent_points = f.recent_points});
    fmt::print("wrote {}/index.html: {} series, {} points drawn, {} change point(s), {} files\n", f.report_dir,
               written.series, written.points, written.changes, written.files);
    return exit_code::ok;
  } catch (const history::StoreError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_summary(e));
  }
  return exit_code::internal;
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto* sub = app.add_subcommand("history",
                                 "Every run in a history store (SQLite or PostgreSQL): ingest, list, detect, confirm "
                                 "and bisect change points, draw trends (docs/history.md)");
  sub->require_subcommand(1, 1);
  auto f = std::make_shared<HistoryFlags>();
  sub->add_option("--store", f->store,
                  "The store: a SQLite file or a postgresql:// URL (default $TIPBENCH_HISTORY_STORE, else "
                  "results/history.db; a file is made when absent)")
      ->check(not_a_flag());
  auto* ingest_cmd = sub->add_subcommand(
      "ingest", "Store result files, each once (by its SHA-256) and atomically, with every block's sample");
  ingest_cmd->add_option("runs", f->runs, "Result files")->required()->check(CLI::ExistingFile);
  auto* runs_cmd = sub->add_subcommand("runs", "List the stored runs, oldest first");
  auto* detect_cmd = sub->add_subcommand(
      "detect", "Find change points in every series (E-divisive means with a t-test); exit 1 on a new regression");
  detect_cmd
      ->add_option("--since", f->detect.since,
                   "Only changes whose first run after is this late (UTC, e.g. 2026-11-20) are new")
      ->check(utc_time());
  add_detector_flags(detect_cmd, *f);
  detect_cmd->add_flag("--record", f->record,
                       "Keep the change points found in the store (table change_points), replacing those of the "
                       "series examined");
  detect_cmd->add_flag("--confirm", f->confirm,
                       "Compare each new regression's two builds (--binaries) with the interleaved gate: "
                       "DIFFERENT / SAME / RUN MORE");
  add_confirm_flags(detect_cmd, f->builds);
  detect_cmd->add_option("--json", f->json_out, "Also write the change points as JSON")->check(not_a_flag());
  detect_cmd->add_option("--markdown", f->markdown_out, "Also write them as a Markdown table")->check(not_a_flag());
  auto* bisect_cmd = sub->add_subcommand(
      "bisect", "Find the first commit of a series' regression: each commit's build against the good one, interleaved");
  add_detector_flags(bisect_cmd, *f);
  bisect_cmd
      ->add_option("--good", f->bisect.good, "Last commit without the regression (default: the run before the change)")
      ->check(not_a_flag());
  bisect_cmd->add_option("--bad", f->bisect.bad, "A commit with it (default: the first run after the change)")
      ->check(not_a_flag());
  bisect_cmd->add_option("--repo", f->bisect.repo, "The git repository of the commits (default .)")
      ->check(not_a_flag());
  bisect_cmd->add_option("--json", f->bisect.json_out, "Also write the steps and the outcome as JSON")
      ->check(not_a_flag());
  add_confirm_flags(bisect_cmd, f->builds);
  auto* annotate_cmd = sub->add_subcommand(
      "annotate", "Note on a stored run: exclude it from every series, or mark a change at it as expected");
  add_annotate_flags(annotate_cmd, f->annotate);
  auto* annotations_cmd = sub->add_subcommand("annotations", "List the annotations, oldest first");
  auto* report_cmd = sub->add_subcommand(
      "report",
      "Write the trend dashboard: a static site (index.html, one data file per series) that opens from file://");
  report_cmd->add_option("--out", f->report_dir, "The site's folder (made when absent)")
      ->required()
      ->check(not_a_flag());
  report_cmd->add_option("--series", f->detect.filter, "Only series whose \"case/arm metric\" contains this text")
      ->check(not_a_flag());
  report_cmd
      ->add_option("--recent", f->recent_points,
                   "Runs per series drawn in full; older ones thinned to as many again (default 200)")
      ->check(whole_number(1, 1000000));
  report_cmd->add_option("--title", f->title, "The page's title")->check(not_a_flag());
  report_cmd->add_option("--chartjs", f->chartjs, "Chart.js to copy beside the page (default: Debian's libjs-chart.js)")
      ->check(not_a_flag());
  // `history runs --store X` as well as `history --store X runs`: --store belongs to `history`.
  for (auto* command : sub->get_subcommands({})) command->fallthrough();
  return {sub, [f, ingest_cmd, runs_cmd, detect_cmd, bisect_cmd, annotate_cmd, annotations_cmd, report_cmd] {
            if (report_cmd->parsed()) return report(*f);
            if (annotate_cmd->parsed()) {
              return with_existing_store(*f, [&](history::HistoryStore& s) { return annotate(s, f->annotate); });
            }
            if (annotations_cmd->parsed()) {
              return with_existing_store(*f, [](history::HistoryStore& s) { return list_annotations(s); });
            }
            if (bisect_cmd->parsed()) return bisect(*f);
            if (detect_cmd->parsed() && !f->confirm) {
              for (const char* flag : {"--binaries", "--build", "--device", "--blocks", "--max-blocks", "--threshold",
                                       "--full", "--out-dir", "--seed"}) {
                if (detect_cmd->count(flag) > 0) {
                  fmt::print(stderr, "error: {} goes with --confirm\n", flag);
                  return exit_code::usage;
                }
              }
            }
            if (ingest_cmd->parsed()) return ingest(*f);
            if (runs_cmd->parsed()) return list_runs(*f);
            if (detect_cmd->parsed()) return detect(*f);
            return exit_code::usage;
          }};
}

}  // namespace tipbench::cli
