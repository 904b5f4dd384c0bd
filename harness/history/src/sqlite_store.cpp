#include "tipbench/history/store.h"

#include "ingest_common.h"
#include "store_schema.h"
#include "tipbench/gate/cells.h"
#include "tipbench/result.h"
#include "tipbench/sha256.h"

#include <fmt/format.h>
#include <signal.h>

namespace tipbench::history {

namespace {

// A prepared statement, finalized on every way out.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& bind_double(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  // True while a row is there; false when done. Throws StoreError on anything else.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail();
    return false;
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void run_once() {
    (void)step();
    reset();
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  [[noreturn]] void fail() const {
    const int code = sqlite3_errcode(db_);
    const std::string why = sqlite3_errmsg(db_);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
      throw StoreError(fmt::format("{}: busy: another process held the store for 30 s ({})", path_, why));
    }
    throw StoreError(fmt::format("{}: {}", path_, why));
  }
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteStore final : public StoreBackend {
 public:
  explicit SqliteStore(const std::string& path);
  ~SqliteStore() override { sqlite3_close(db_); }
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  IngestOutcome ingest(const std::string& bytes, const Result& run, const std::string& source) override;
  std::vector<StoredRun> runs() const override;
  std::vector<SeriesInfo> series() const override;
  std::map<std::int64_t, std::shared_ptr<const RunPoint>> run_points() const override;
  std::vector<std::pair<std::int64_t, double>> samples(std::int64_t series_id) const override;
  std::vector<std::int64_t> series_of_run(std::int64_t run_id) const override;
  std::int64_t add_annotation(const Annotation& a) override;
  bool remove_annotation(std::int64_t id) override;
  std::vector<Annotation> annotations() const override;
  void replace_change_points(const std::vector<std::int64_t>& series_ids,
                             const std::vector<StoredChangePoint>& points) override;
  std::vector<StoredChangePoint> change_points() const override;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

SqliteStore::SqliteStore(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw StoreError(fmt::format("{}: cannot open the history store: {}", path, why));
  }
  try {
    prepare_store(db_, path_);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

IngestOutcome SqliteStore::ingest(const std::string& bytes, const Result& run, const std::string& source) {
  IngestOutcome out;
  out.sha256 = sha256_hex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  const std::string model = model_sha256_of(run);
  const auto& c = run.context;

  exec(db_, "BEGIN IMMEDIATE", path_);  // the write lock first: two ingests serialise, both land
  try {
    Statement known(db_, "SELECT id FROM runs WHERE content_sha256 = ?1", path_);
    if (known.bind(1, out.sha256).step()) {
      out.already_stored = true;
      out.run_id = known.integer(0);
      known.reset();
      exec(db_, "COMMIT", path_);
      return out;
    }
    Statement insert_run(
        db_,
        "INSERT INTO runs(content_sha256, source, timestamp_utc, git_sha, git_dirty, hostname, device, "
        "fingerprint_slug, fingerprint, libtorch_version, model_sha256, conditions, result_schema, "
        "ingested_utc) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        path_);
    insert_run.bind(1, out.sha256)
        .bind(2, source)
        .bind(3, c.timestamp_utc)
        .bind(4, c.git.sha)
        .bind(5, std::int64_t{c.git.dirty})
        .bind(6, c.hostname)
        .bind(7, c.device)
        .bind(8, c.fingerprint_slug)
        .bind(9, nlohmann::json(c.fingerprint).dump())
        .bind(10, c.fingerprint.libtorch_version)
        .bind(11, model)
        .bind(12, c.conditions.is_null() ? std::string("null") : c.conditions.dump())
        .bind(13, run.schema_version)
        .bind(14, utc_now())
        .run_once();
    out.run_id = sqlite3_last_insert_rowid(db_);

    Statement add_series(db_,
                         "INSERT OR IGNORE INTO series(suite, case_name, arm, metric, fingerprint_slug, model_sha256) "
                         "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
                         path_);
    Statement find_series(db_,
                          "SELECT id FROM series WHERE suite = ?1 AND case_name = ?2 AND arm = ?3 AND metric = ?4 AND "
                          "fingerprint_slug = ?5 AND model_sha256 = ?6",
                          path_);
    Statement add_sample(
        db_, "INSERT INTO samples(series_id, run_time, run_id, block, value) VALUES(?1, ?2, ?3, ?4, ?5)", path_);
    const long die_after = die_after_samples();
    for (const auto& cell : gate::extract_cells(run)) {
      const auto& k = cell.key;
      add_series.bind(1, k.suite).bind(2, k.case_name).bind(3, k.arm).bind(4, k.metric);
      add_series.bind(5, c.fingerprint_slug).bind(6, model).run_once();
      find_series.bind(1, k.suite).bind(2, k.case_name).bind(3, k.arm).bind(4, k.metric);
      find_series.bind(5, c.fingerprint_slug).bind(6, model);
      if (!find_series.step()) throw StoreError(path_ + ": a series vanished inside its own transaction");
      const std::int64_t series = find_series.integer(0);
      find_series.reset();
      ++out.cells;
      for (const auto& [block, value] : cell.by_block) {
        add_sample.bind(1, series).bind(2, c.timestamp_utc).bind(3, out.run_id).bind(4, std::int64_t{block});
        add_sample.bind_double(5, value).run_once();
        if (++out.samples == static_cast<std::size_t>(die_after)) raise(SIGKILL);
      }
    }
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return out;
}

std::vector<StoredRun> SqliteStore::runs() const {
  Statement q(db_,
              "SELECT r.id, r.content_sha256, r.source, r.timestamp_utc, r.git_sha, r.hostname, r.device, "
              "r.fingerprint_slug, r.model_sha256, (SELECT count(*) FROM samples s WHERE s.run_id = r.id) "
              "FROM runs r ORDER BY r.timestamp_utc, r.id",
              path_);
  std::vector<StoredRun> out;
  while (q.step()) {
    out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5), q.text(6), q.text(7), q.text(8),
                   static_cast<std::size_t>(q.integer(9))});
  }
  return out;
}

std::vector<SeriesInfo> SqliteStore::series() const {
  Statement q(db_,
              "SELECT id, suite, case_name, arm, metric, fingerprint_slug, model_sha256 FROM series "
              "ORDER BY suite, case_name, arm, metric, fingerprint_slug, model_sha256",
              path_);
  std::vector<SeriesInfo> out;
  while (q.step()) out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5), q.text(6)});
  return out;
}

std::map<std::int64_t, std::shared_ptr<const RunPoint>> SqliteStore::run_points() const {
  Statement q(db_, "SELECT id, timestamp_utc, git_sha, libtorch_version, fingerprint, conditions FROM runs", path_);
  std::map<std::int64_t, std::shared_ptr<const RunPoint>> out;
  while (q.step()) {
    out[q.integer(0)] =
        std::make_shared<const RunPoint>(RunPoint{q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5)});
  }
  return out;
}

std::vector<std::pair<std::int64_t, double>> SqliteStore::samples(std::int64_t series_id) const {
  Statement q(db_, "SELECT run_id, value FROM samples WHERE series_id = ?1 ORDER BY run_time, run_id, block", path_);
  q.bind(1, series_id);
  std::vector<std::pair<std::int64_t, double>> out;
  while (q.step()) out.emplace_back(q.integer(0), q.real(1));
  return out;
}

std::vector<std::int64_t> SqliteStore::series_of_run(std::int64_t run_id) const {
  Statement q(db_, "SELECT DISTINCT series_id FROM samples WHERE run_id = ?1 ORDER BY series_id", path_);
  q.bind(1, run_id);
  std::vector<std::int64_t> out;
  while (q.step()) out.push_back(q.integer(0));
  return out;
}

std::int64_t SqliteStore::add_annotation(const Annotation& a) {
  Statement q(db_,
              "INSERT INTO annotations(run_id, series_id, kind, note, created_utc) "
              "SELECT id, NULLIF(?2, 0), ?3, ?4, ?5 FROM runs WHERE id = ?1",
              path_);
  q.bind(1, a.run_id).bind(2, a.series_id).bind(3, a.kind).bind(4, a.note).bind(5, utc_now()).run_once();
  return sqlite3_changes(db_) == 1 ? sqlite3_last_insert_rowid(db_) : 0;
}

bool SqliteStore::remove_annotation(std::int64_t id) {
  Statement q(db_, "DELETE FROM annotations WHERE id = ?1", path_);
  q.bind(1, id).run_once();
  return sqlite3_changes(db_) == 1;
}

std::vector<Annotation> SqliteStore::annotations() const {
  Statement q(db_,
              "SELECT a.id, a.kind, COALESCE(a.run_id, 0), COALESCE(a.series_id, 0), a.note, a.created_utc, "
              "COALESCE(r.timestamp_utc, '') FROM annotations a LEFT JOIN runs r ON r.id = a.run_id ORDER BY a.id",
              path_);
  std::vector<Annotation> out;
  while (q.step())
    out.push_back({q.integer(0), q.text(1), q.integer(2), q.integer(3), q.text(4), q.text(5), q.text(6)});
  return out;
}

void SqliteStore::replace_change_points(const std::vector<std::int64_t>& series_ids,
                                        const std::vector<StoredChangePoint>& points) {
  exec(db_, "BEGIN IMMEDIATE", path_);
  try {
    Statement drop(db_, "DELETE FROM change_points WHERE series_id = ?1", path_);
    for (const auto id : series_ids) drop.bind(1, id).run_once();
    Statement add(db_,
                  "INSERT INTO change_points(series_id, run_id, detected_utc, ratio, ratio_low, ratio_high, p_value, "
                  "verdict) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                  path_);
    for (const auto& p : points) {
      add.bind(1, p.series_id).bind(2, p.run_id).bind(3, p.detected_utc).bind(8, p.verdict);
      add.bind_double(4, p.ratio).bind_double(5, p.ratio_low).bind_double(6, p.ratio_high).bind_double(7, p.p_value);
      add.run_once();
    }
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<StoredChangePoint> SqliteStore::change_points() const {
  Statement q(db_,
              "SELECT series_id, run_id, detected_utc, ratio, ratio_low, ratio_high, p_value, verdict "
              "FROM change_points ORDER BY series_id, run_id",
              path_);
  std::vector<StoredChangePoint> out;
  while (q.step()) {
    out.push_back({q.integer(0), q.integer(1), q.text(2), q.real(3), q.real(4), q.real(5), q.real(6), q.text(7)});
  }
  return out;
}

}  // namespace

std::unique_ptr<StoreBackend> open_sqlite_store(const std::string& path) { return std::make_unique<SqliteStore>(path); }

}  // namespace tipbench::history
