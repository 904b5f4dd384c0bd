#include "tipbench/history/store.h"

#include "sql_database.h"

#include "tipbench/results/result.h"

#include <fstream>
#include <iterator>

namespace tipbench::history {

bool is_postgres_url(const std::string& location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

HistoryStore::HistoryStore(const std::string& location, StoreOpening opening)
    : db_(is_postgres_url(location) ? open_postgres_database(location, opening == StoreOpening::make_when_absent)
                                    : open_sqlite_database(location)) {}

HistoryStore::~HistoryStore() = default;

IngestOutcome HistoryStore::ingest(const std::string& result_path) {
  std::ifstream in(result_path, std::ios::binary);
  if (!in) throw InputError(result_path + ": cannot be read");
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return ingest(bytes, parse_result_text(bytes, result_path), result_path);  // InputError: not a result
}

std::vector<TrendPoint> HistoryStore::trend(std::int64_t series_id) const {
  auto points = assemble(samples_of({series_id})[series_id]);
  for (auto& p : points) p.series_id = series_id;
  return points;
}

std::map<std::int64_t, std::vector<TrendPoint>> HistoryStore::trends(
    const std::vector<std::int64_t>& series_ids) const {
  std::map<std::int64_t, std::vector<TrendPoint>> out;
  for (const auto& [id, samples] : samples_of(series_ids)) {
    auto& points = out[id] = assemble(samples);
    for (auto& p : points) p.series_id = id;
  }
  return out;
}

std::vector<TrendPoint> HistoryStore::assemble(const std::vector<std::pair<std::int64_t, double>>& samples) const {
  if (!run_points_) run_points_ = read_run_points();
  std::vector<TrendPoint> out;
  for (const auto& [run, value] : samples) {
    if (out.empty() || out.back()->run_id != run) {
      auto known = run_points_->find(run);
      if (known == run_points_->end()) {  // ingested by another process since the runs were read
        run_points_ = read_run_points();
        known = run_points_->find(run);
        if (known == run_points_->end()) throw StoreError("a sample of run " + std::to_string(run) + " has no run");
      }
      out.push_back({.run = known->second});
    }
    out.back().samples.push_back(value);
  }
  return out;
}

std::vector<std::int64_t> HistoryStore::annotate(const std::string& kind, std::int64_t run_id,
                                                 const std::vector<std::int64_t>& series_ids, const std::string& note) {
  if (kind != kExcludeRun && kind != kExpectedChange) throw StoreError("unknown annotation kind '" + kind + "'");
  std::vector<std::int64_t> ids;
  const auto add = [&](std::int64_t series) {
    const auto id = add_annotation({.kind = kind, .run_id = run_id, .series_id = series, .note = note});
    if (id == 0) throw InputError("there is no run " + std::to_string(run_id) + " in the store");
    ids.push_back(id);
  };
  if (series_ids.empty()) add(0);
  for (const auto series : series_ids) add(series);
  return ids;
}

}  // namespace tipbench::history
