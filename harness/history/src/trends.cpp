#include "tipbench/history/trends.h"

#include "tipbench/run_conditions.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
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
  std::vector<SeriesTrend> out;
  for (auto& [key, t] : groups) {
    for (const auto id : ids[key]) {
      for (auto& p : store.trend(id)) {
        if (!p.samples.empty()) t.runs.push_back(std::move(p));
      }
    }
    std::stable_sort(t.runs.begin(), t.runs.end(), [](const TrendPoint& a, const TrendPoint& b) {
      return std::tie(a.timestamp_utc, a.run_id) < std::tie(b.timestamp_utc, b.run_id);
    });
    for (const auto& p : t.runs) {
      t.medians.push_back(median(p.samples));
      t.loaded.push_back(loaded(p.conditions));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tipbench::history
