#include "history_annotate.h"

#include "cli/shared/cli_checks.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/results/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

namespace tipbench::cli {

namespace {

// The run's series whose "case/arm metric" contains `filter`.
std::vector<std::int64_t> matching_series(const history::HistoryStore& store, std::int64_t run,
                                          const std::string& filter) {
  const auto in_run = store.series_of_run(run);
  const std::set<std::int64_t> ids(in_run.begin(), in_run.end());
  std::vector<std::int64_t> out;
  for (const auto& s : store.series()) {
    if (ids.contains(s.id) && (s.case_name + "/arm:" + s.arm + " " + s.metric).find(filter) != std::string::npos) {
      out.push_back(s.id);
    }
  }
  return out;
}

}  // namespace

void add_annotate_flags(CLI::App* command, AnnotateFlags& f) {
  command->add_option("--exclude-run", f.exclude_run, "Leave this run (its id in `history runs`) out of every series")
      ->check(whole_number(1, 1ull << 62));
  command
      ->add_option("--expected-change", f.expected_run,
                   "A change at this run is intended (an upgrade): listed as expected, never a new regression")
      ->check(whole_number(1, 1ull << 62));
  command
      ->add_option(
          "--series", f.series,
          "--expected-change: only the run's series whose \"case/arm metric\" contains this text (default all)")
      ->check(not_a_flag());
  command->add_option("--note", f.note, "Why (required with --exclude-run and --expected-change)")->check(not_a_flag());
  command->add_option("--remove", f.remove, "Delete the annotation with this id (`history annotations` lists them)")
      ->check(whole_number(1, 1ull << 62));
}

int annotate(history::HistoryStore& store, const AnnotateFlags& f) {
  const int actions = (f.exclude_run > 0) + (f.expected_run > 0) + (f.remove > 0);
  const auto refuse = [](const std::string& why) {
    fmt::print(stderr, "error: {}\n", why);
    return exit_code::usage;
  };
  if (actions != 1) return refuse("give one of --exclude-run RUN, --expected-change RUN, --remove ID");
  if (!f.series.empty() && f.expected_run == 0) return refuse("--series goes with --expected-change");
  if (f.remove > 0) {
    if (!store.remove_annotation(f.remove)) return refuse(fmt::format("there is no annotation {}", f.remove));
    fmt::print("removed annotation {}\n", f.remove);
    return exit_code::ok;
  }
  if (f.note.empty()) return refuse("--note is required: say why, for whoever reads the history next");
  const std::int64_t run = f.exclude_run > 0 ? f.exclude_run : f.expected_run;
  std::vector<std::int64_t> series;
  if (!f.series.empty()) {
    series = matching_series(store, run, f.series);
    if (series.empty()) return refuse(fmt::format("no series of run {} matches '{}'", run, f.series));
  }
  try {
    const auto ids =
        store.annotate(f.exclude_run > 0 ? history::kExcludeRun : history::kExpectedChange, run, series, f.note);
    fmt::print("annotation {}: {} at run {}{}: {}\n", ids.front(), f.exclude_run > 0 ? "exclude" : "expected change",
               run, series.empty() ? "" : fmt::format(", {} series", series.size()), f.note);
  } catch (const InputError& e) {
    return refuse(e.what());
  }
  return exit_code::ok;
}

int list_annotations(const history::HistoryStore& store) {
  const auto all = store.annotations();
  if (all.empty()) fmt::print("no annotations\n");
  for (const auto& a : all) {
    fmt::print("{:>5}  {:<15}  run {} ({})  {}  {}  {}\n", a.id, a.kind, a.run_id, a.run_time,
               a.series_id == 0 ? std::string("all series") : fmt::format("series {}", a.series_id), a.created_utc,
               a.note);
  }
  return exit_code::ok;
}

}  // namespace tipbench::cli
