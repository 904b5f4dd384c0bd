#include "store_schema.h"

#include "tipbench/history/store.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

namespace tipbench::history {

namespace {

// After PyTorch's benchmark database (one row per run with its machine and stack, one per
// measured value), plus what the change-point detection and the bootstrap need: every block's
// sample, change points and annotations. samples is keyed (series, run time, run, block): a
// series' trend is one index range.
constexpr const char* kSqliteSchema = R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  content_sha256 TEXT NOT NULL UNIQUE,
  source TEXT NOT NULL,
  timestamp_utc TEXT NOT NULL,
  git_sha TEXT NOT NULL,
  git_dirty INTEGER NOT NULL,
  hostname TEXT NOT NULL,
  device TEXT NOT NULL,
  fingerprint_slug TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  libtorch_version TEXT NOT NULL,
  model_sha256 TEXT NOT NULL,
  conditions TEXT,
  result_schema TEXT NOT NULL,
  ingested_utc TEXT NOT NULL);
CREATE INDEX runs_by_time ON runs(timestamp_utc);
CREATE TABLE series(
  id INTEGER PRIMARY KEY,
  suite TEXT NOT NULL,
  case_name TEXT NOT NULL,
  arm TEXT NOT NULL,
  metric TEXT NOT NULL,
  fingerprint_slug TEXT NOT NULL,
  model_sha256 TEXT NOT NULL,
  UNIQUE(suite, case_name, arm, metric, fingerprint_slug, model_sha256));
CREATE TABLE samples(
  series_id INTEGER NOT NULL REFERENCES series(id),
  run_time TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  block INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY(series_id, run_time, run_id, block)) WITHOUT ROWID;
CREATE INDEX samples_by_run ON samples(run_id);
CREATE TABLE change_points(
  id INTEGER PRIMARY KEY,
  series_id INTEGER NOT NULL REFERENCES series(id),
  run_id INTEGER NOT NULL REFERENCES runs(id),
  detected_utc TEXT NOT NULL,
  ratio REAL NOT NULL,
  ratio_low REAL NOT NULL,
  ratio_high REAL NOT NULL,
  p_value REAL NOT NULL,
  verdict TEXT NOT NULL);
CREATE INDEX change_points_by_series ON change_points(series_id, run_id);
CREATE TABLE annotations(
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  series_id INTEGER REFERENCES series(id),
  kind TEXT NOT NULL CHECK(kind IN ('exclude_run', 'expected_change')),
  note TEXT NOT NULL,
  created_utc TEXT NOT NULL);
)sql";

int pragma_int(sqlite3* db, const char* pragma, const std::string& path) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, pragma, -1, &stmt, nullptr) != SQLITE_OK || sqlite3_step(stmt) != SQLITE_ROW) {
    const std::string why = sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    throw StoreError(fmt::format("{}: not a tipbench history store ({})", path, why));
  }
  const int value = sqlite3_column_int(stmt, 0);
  sqlite3_finalize(stmt);
  return value;
}

}  // namespace

void exec_script(sqlite3* db, const std::string& sql, const std::string& path) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    throw StoreError(fmt::format("{}: {}", path, why));
  }
}

void prepare_store(sqlite3* db, const std::string& path) {
  sqlite3_busy_timeout(db, 30'000);  // another ingest holds the write lock: wait, then say so
  // One read transaction, so the three reads see one snapshot: a process creating the schema at
  // the same moment is seen whole or not at all (read apart, an application_id of 0 and that
  // process's tables were once seen together, and the store refused as another application's).
  // The first read of a file that is not SQLite fails here ("file is not a database").
  int application = 0, version = 0, tables = 0;
  exec_script(db, "BEGIN", path);
  try {
    application = pragma_int(db, "PRAGMA application_id", path);
    version = pragma_int(db, "PRAGMA user_version", path);
    tables = pragma_int(db, "SELECT count(*) FROM sqlite_master", path);
    exec_script(db, "COMMIT", path);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  if (application != kApplicationId && (application != 0 || tables != 0)) {
    throw StoreError(
        fmt::format("{}: a SQLite database of another application (application_id {:#x}, {} "
                    "objects), not a tipbench history store",
                    path, static_cast<unsigned>(application), tables));
  }
  if (version > kSchemaVersion) {
    throw StoreError(
        fmt::format("{}: a history store of schema {}, made by a newer tipbench; this one reads "
                    "schema {}",
                    path, version, kSchemaVersion));
  }
  // Switching a new file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once,
  // without the busy handler, when another connection opens the file at the same moment (seen: 37
  // of 400 processes opening one new store together): retry for up to the busy timeout.
  for (int waited_ms = 0;; waited_ms += 10) {
    if (sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr) == SQLITE_OK) break;
    if (sqlite3_errcode(db) != SQLITE_BUSY || waited_ms >= 30'000) exec_script(db, "PRAGMA journal_mode=WAL", path);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  exec_script(db, "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL", path);
  if (application == kApplicationId) return;
  // An empty file: the schema in one transaction (two processes creating it at once: the second
  // waits for the lock, then finds it made).
  exec_script(db, "BEGIN IMMEDIATE", path);
  try {
    if (pragma_int(db, "PRAGMA application_id", path) != kApplicationId) {
      exec_script(db, kSqliteSchema, path);
      exec_script(db, fmt::format("PRAGMA application_id={}; PRAGMA user_version={}", kApplicationId, kSchemaVersion),
                  path);
    }
    exec_script(db, "COMMIT", path);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace tipbench::history
