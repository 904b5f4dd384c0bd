#include "tipbench/history/trends.h"

#include "tipbench/environment/run_conditions.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tipbench::history {

namespace {

double median(std::vector<double> v) {
  const auto mid = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

bool loaded(const std::string& conditions) {
  try {
    return !conditions_warning(nlohmann::json::parse(conditions)).empty();
  } catch (const std::exception&) {
    return false;  // unreadable conditions flag nothing
  }
}

}  // namespace

std::string hardware_of_slug(const std::string& slug) {
  const auto cut = std::min(slug.find("_cuda"), slug.find("_torch"));
  return slug.substr(0, cut);
}

std::vector<SeriesTrend> read_trends(const HistoryStore& store, const std::string& filter) {
  // (cell, metric, hardware, model) -> its stored series (one per software stack) and suite
  std::map<std::tuple<std::string, std::string, std::string, std::string>, SeriesTrend> groups;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<std::int64_t>> ids;
  for (const auto& s : store.series()) {
    const std::string cell = s.case_name + "/arm:" + s.arm;
    if (!filter.empty() && (cell + " " + s.metric).find(filter) == std::string::npos) continue;
    const auto key = std::make_tuple(cell, s.metric, hardware_of_slug(s.fingerprint_slug), s.model_sha256);
    auto& t = groups[key];
    t.suite = s.suite;
    std::tie(t.cell, t.metric, t.hardware, t.model_sha256) = key;
    ids[key].push_back(s.id);
  }
  const auto annotations = store.annotations();
  std::map<std::int64_t, std::string> excluded;  // run -> note
  for (const auto& a : annotations) {
    if (a.kind == kExcludeRun) excluded[a.run_id] = a.note.empty() ? "excluded" : a.note;
  }
  // Read in batches: one round trip per batch on a server, a bounded result set each.
  std::vector<std::int64_t> all_ids;
  for (const auto& [key, list] : ids) all_ids.insert(all_ids.end(), list.begin(), list.end());
  std::map<std::int64_t, std::vector<TrendPoint>> by_series;
  constexpr std::size_t kBatch = 500;
  for (std::size_t from = 0; from < all_ids.size(); from += kBatch) {
    const std::vector<std::int64_t> batch(
        all_ids.begin() + static_cast<std::ptrdiff_t>(from),
        all_ids.begin() + static_cast<std::ptrdiff_t>(std::min(from + kBatch, all_ids.size())));
    by_series.merge(store.trends(batch));
  }
  std::vector<SeriesTrend> out;
  for (auto& [key, t] : groups) {
    t.series_ids = ids[key];
    for (const auto id : ids[key]) {
      for (auto& p : by_series[id]) {
        if (!p.samples.empty()) t.runs.push_back(std::move(p));
      }
    }
    std::stable_sort(t.runs.begin(), t.runs.end(), [](const TrendPoint& a, const TrendPoint& b) {
      return std::tie(a->timestamp_utc, a->run_id) < std::tie(b->timestamp_utc, b->run_id);
    });
    std::set<std::int64_t> runs;
    for (const auto& p : t.runs) {
      t.medians.push_back(median(p.samples));
      t.loaded.push_back(loaded(p->conditions));
      const auto note = excluded.find(p->run_id);
      t.excluded.push_back(note == excluded.end() ? "" : note->second);
      runs.insert(p->run_id);
    }
    for (const auto& a : annotations) {
      if (a.kind != kExpectedChange) continue;
      const bool names_this = std::find(t.series_ids.begin(), t.series_ids.end(), a.series_id) != t.series_ids.end();
      if (names_this || (a.series_id == 0 && runs.contains(a.run_id))) t.expected.push_back(a);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tipbench::history
