#include "postgres_schema.h"

#include "store_schema.h"  // kSchemaVersion: one schema, two databases
#include "tipbench/history/store.h"

#include <fmt/format.h>

namespace tipbench::history {

namespace {

// store_schema.cpp's tables, columns and indexes in PostgreSQL's types. The columns a query sorts
// or keys on compare byte by byte (COLLATE "C"), as SQLite's do, so both stores list in the same
// order whatever the database's locale; samples' primary key keeps a series' trend one index range.
constexpr const char* kPostgresSchema = R"sql(
CREATE TABLE tipbench_store(
  application TEXT NOT NULL,
  schema_version INTEGER NOT NULL);
CREATE TABLE runs(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  content_sha256 TEXT NOT NULL UNIQUE,
  source TEXT NOT NULL,
  timestamp_utc TEXT COLLATE "C" NOT NULL,
  git_sha TEXT NOT NULL,
  git_dirty INTEGER NOT NULL,
  hostname TEXT NOT NULL,
  device TEXT NOT NULL,
  fingerprint_slug TEXT COLLATE "C" NOT NULL,
  fingerprint TEXT NOT NULL,
  libtorch_version TEXT NOT NULL,
  model_sha256 TEXT COLLATE "C" NOT NULL,
  conditions TEXT,
  result_schema TEXT NOT NULL,
  ingested_utc TEXT NOT NULL);
CREATE INDEX runs_by_time ON runs(timestamp_utc);
CREATE TABLE series(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  suite TEXT COLLATE "C" NOT NULL,
  case_name TEXT COLLATE "C" NOT NULL,
  arm TEXT COLLATE "C" NOT NULL,
  metric TEXT COLLATE "C" NOT NULL,
  fingerprint_slug TEXT COLLATE "C" NOT NULL,
  model_sha256 TEXT COLLATE "C" NOT NULL,
  UNIQUE(suite, case_name, arm, metric, fingerprint_slug, model_sha256));
CREATE TABLE samples(
  series_id BIGINT NOT NULL REFERENCES series(id),
  run_time TEXT COLLATE "C" NOT NULL,
  run_id BIGINT NOT NULL REFERENCES runs(id),
  block INTEGER NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  PRIMARY KEY(series_id, run_time, run_id, block));
CREATE INDEX samples_by_run ON samples(run_id);
CREATE TABLE change_points(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  series_id BIGINT NOT NULL REFERENCES series(id),
  run_id BIGINT NOT NULL REFERENCES runs(id),
  detected_utc TEXT NOT NULL,
  ratio DOUBLE PRECISION NOT NULL,
  ratio_low DOUBLE PRECISION NOT NULL,
  ratio_high DOUBLE PRECISION NOT NULL,
  p_value DOUBLE PRECISION NOT NULL,
  verdict TEXT NOT NULL);
CREATE INDEX change_points_by_series ON change_points(series_id, run_id);
CREATE TABLE annotations(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id BIGINT REFERENCES runs(id),
  series_id BIGINT REFERENCES series(id),
  kind TEXT NOT NULL CHECK(kind IN ('exclude_run', 'expected_change')),
  note TEXT NOT NULL,
  created_utc TEXT NOT NULL);
)sql";

// The marker, and what else the schema tipbench would use (the search path's first) holds.
constexpr const char* kInspect = R"sql(
SELECT EXISTS(SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = current_schema() AND c.relname = 'tipbench_store' AND c.relkind = 'r'),
       (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')),
       coalesce(current_schema(), '(none)')
)sql";

// True: a tipbench store of a schema this build reads. False: nothing there yet. Throws StoreError
// for another application's database or a newer schema.
bool is_this_store(const PgConnection& db) {
  const auto found = db.exec(kInspect);
  const bool marked = found.text(0, 0) == "t";
  const auto objects = found.integer(0, 1);
  const auto schema = found.text(0, 2);
  if (!marked) {
    if (objects == 0) return false;
    db.fail(
        fmt::format("a PostgreSQL database of another application ({} tables, views or sequences in schema "
                    "{}, no tipbench_store), not a tipbench history store",
                    objects, schema));
  }
  const auto marker = db.exec("SELECT application, schema_version FROM tipbench_store");
  if (marker.rows() != 1 || marker.text(0, 0) != kPostgresApplication) {
    db.fail(
        fmt::format("a PostgreSQL database of another application (its tipbench_store has {} rows{}), not a "
                    "tipbench history store",
                    marker.rows(), marker.rows() == 1 ? ", naming '" + marker.text(0, 0) + "'" : ""));
  }
  const auto version = marker.integer(0, 1);
  if (version > kSchemaVersion) {
    db.fail(fmt::format("a history store of schema {}, made by a newer tipbench; this one reads schema {}", version,
                        kSchemaVersion));
  }
  return true;
}

}  // namespace

void prepare_postgres_store(const PgConnection& db, bool make_when_absent) {
  if (is_this_store(db)) return;
  if (!make_when_absent)
    db.fail("no tipbench history store in this database (tipbench history ingest RUN.json makes one)");
  // An empty database: the schema in one transaction. Two processes making it at once: the second
  // waits for the lock, then finds it made.
  db.exec("BEGIN");
  try {
    db.exec("SELECT pg_advisory_xact_lock($1::bigint)", {kSchemaLock});
    if (!is_this_store(db)) {
      db.exec(kPostgresSchema);
      db.exec("INSERT INTO tipbench_store(application, schema_version) VALUES($1, $2::integer)",
              {kPostgresApplication, std::to_string(kSchemaVersion)});
    }
    db.exec("COMMIT");
  } catch (...) {
    db.rollback();
    throw;
  }
}

}  // namespace tipbench::history
