// HistoryStore's reads and its annotations and change points: every statement written once, on
// either database (sql_database.h).
#include "sql_database.h"
#include "tipbench/history/store.h"
#include "tipbench/environment/this_process.h"

namespace tipbench::history {

std::optional<std::int64_t> SqlDatabase::first_integer(const std::string& sql, const SqlValues& params) const {
  std::optional<std::int64_t> out;
  query(sql, params, [&](const SqlRow& row) {
    if (!out) out = row.integer(0);
  });
  return out;
}

void SqlDatabase::in_write_transaction(const std::function<void()>& body) {
  begin_write();
  try {
    body();
    commit();
  } catch (...) {
    rollback();
    throw;
  }
}

std::vector<StoredRun> HistoryStore::runs() const {
  std::vector<StoredRun> out;
  db_->query(
      "SELECT r.id, r.content_sha256, r.source, r.timestamp_utc, r.git_sha, r.hostname, r.device, "
      "r.fingerprint_slug, r.model_sha256, (SELECT count(*) FROM samples s WHERE s.run_id = r.id) "
      "FROM runs r ORDER BY r.timestamp_utc, r.id",
      {}, [&](const SqlRow& q) {
        out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5), q.text(6), q.text(7),
                       q.text(8), static_cast<std::size_t>(q.integer(9))});
      });
  return out;
}

std::map<std::int64_t, std::string> HistoryStore::device_of_runs() const {
  std::map<std::int64_t, std::string> out;
  db_->query("SELECT id, device FROM runs", {}, [&](const SqlRow& q) { out[q.integer(0)] = q.text(1); });
  return out;
}

std::vector<SeriesInfo> HistoryStore::series() const {
  std::vector<SeriesInfo> out;
  db_->query(
      "SELECT id, suite, case_name, arm, metric, fingerprint_slug, model_sha256 FROM series "
      "ORDER BY suite, case_name, arm, metric, fingerprint_slug, model_sha256",
      {}, [&](const SqlRow& q) {
        out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5), q.text(6)});
      });
  return out;
}

std::map<std::int64_t, std::shared_ptr<const RunPoint>> HistoryStore::read_run_points() const {
  std::map<std::int64_t, std::shared_ptr<const RunPoint>> out;
  db_->query("SELECT id, timestamp_utc, git_sha, libtorch_version, fingerprint, conditions FROM runs", {},
             [&](const SqlRow& q) {
               out[q.integer(0)] = std::make_shared<const RunPoint>(
                   RunPoint{q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5)});
             });
  return out;
}

// Every series' samples as (run id, value), by run time, run and block, in one statement: 10,000
// series one query each spent 9 s of a 16 s PostgreSQL detect in round trips (docs/history.md "Scale").
std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>> HistoryStore::samples_of(
    const std::vector<std::int64_t>& series_ids) const {
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>> out;
  for (const auto id : series_ids) out[id];
  std::vector<std::pair<std::int64_t, double>>* current = nullptr;
  std::int64_t current_id = -1;
  db_->query("SELECT series_id, run_id, value FROM samples WHERE " + db_->is_one_of("series_id", 1) +
                 " ORDER BY series_id, run_time, run_id, block",
             {db_->id_list(series_ids)}, [&](const SqlRow& q) {
               const auto id = q.integer(0);
               if (id != current_id) current = &out[current_id = id];
               current->emplace_back(q.integer(1), q.real(2));
             });
  return out;
}

std::vector<std::int64_t> HistoryStore::series_of_run(std::int64_t run_id) const {
  std::vector<std::int64_t> out;
  db_->query("SELECT DISTINCT series_id FROM samples WHERE run_id = $1 ORDER BY series_id", {run_id},
             [&](const SqlRow& q) { out.push_back(q.integer(0)); });
  return out;
}

// Its id; 0 when there is no run `a.run_id`.
std::int64_t HistoryStore::add_annotation(const Annotation& a) {
  return db_
      ->first_integer(
          "INSERT INTO annotations(run_id, series_id, kind, note, created_utc) "
          "SELECT id, NULLIF($2, 0), $3, $4, $5 FROM runs WHERE id = $1 RETURNING id",
          {a.run_id, a.series_id, a.kind, a.note, utc_timestamp()})
      .value_or(0);
}

bool HistoryStore::remove_annotation(std::int64_t id) {
  return db_->first_integer("DELETE FROM annotations WHERE id = $1 RETURNING id", {id}).has_value();
}

std::vector<Annotation> HistoryStore::annotations() const {
  std::vector<Annotation> out;
  db_->query(
      "SELECT a.id, a.kind, COALESCE(a.run_id, 0), COALESCE(a.series_id, 0), a.note, a.created_utc, "
      "COALESCE(r.timestamp_utc, '') FROM annotations a LEFT JOIN runs r ON r.id = a.run_id ORDER BY a.id",
      {}, [&](const SqlRow& q) {
        out.push_back({q.integer(0), q.text(1), q.integer(2), q.integer(3), q.text(4), q.text(5), q.text(6)});
      });
  return out;
}

void HistoryStore::replace_change_points(const std::vector<std::int64_t>& series_ids,
                                         const std::vector<StoredChangePoint>& points) {
  std::vector<SqlValues> rows;
  for (const auto& p : points) {
    rows.push_back({p.series_id, p.run_id, p.detected_utc, p.ratio, p.ratio_low, p.ratio_high, p.p_value, p.verdict});
  }
  db_->in_write_transaction([&] {
    db_->exec("DELETE FROM change_points WHERE " + db_->is_one_of("series_id", 1), {db_->id_list(series_ids)});
    db_->insert_rows("change_points",
                     {"series_id", "run_id", "detected_utc", "ratio", "ratio_low", "ratio_high", "p_value", "verdict"},
                     rows, OnConflict::fail);
  });
}

std::vector<StoredChangePoint> HistoryStore::change_points() const {
  std::vector<StoredChangePoint> out;
  db_->query(
      "SELECT series_id, run_id, detected_utc, ratio, ratio_low, ratio_high, p_value, verdict "
      "FROM change_points ORDER BY series_id, run_id",
      {}, [&](const SqlRow& q) {
        out.push_back({q.integer(0), q.integer(1), q.text(2), q.real(3), q.real(4), q.real(5), q.real(6), q.text(7)});
      });
  return out;
}

}  // namespace tipbench::history
