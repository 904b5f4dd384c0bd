// The history store on a PostgreSQL server (a fleet's): the SQLite store's schema and behaviour
// (sqlite_store.cpp) through libpq. Every value travels as a query parameter.
#include "postgres_connection.h"
#include "postgres_schema.h"
#include "tipbench/gate/cells.h"
#include "ingest_common.h"
#include "tipbench/history/store.h"
#include "tipbench/result.h"
#include "tipbench/sha256.h"

#include <fmt/format.h>
#include <signal.h>

namespace tipbench::history {

namespace {

// A run's series, made when new, then their ids in the cells' order: two statements for all of a
// run's cells (one round trip per cell cost 0.27 ms each: 217 ms per run of 400 cells, measured).
constexpr const char* kAddSeries = R"sql(
INSERT INTO series(suite, case_name, arm, metric, fingerprint_slug, model_sha256)
SELECT su, ca, ar, me, $5, $6 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(su, ca, ar, me)
ON CONFLICT DO NOTHING
)sql";
constexpr const char* kSeriesIds = R"sql(
SELECT s.id FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(su, ca, ar, me, i)
JOIN series s ON s.suite = t.su AND s.case_name = t.ca AND s.arm = t.ar AND s.metric = t.me
  AND s.fingerprint_slug = $5 AND s.model_sha256 = $6
ORDER BY t.i
)sql";

// All of a run's samples in one statement: series ids, blocks and values as three arrays.
constexpr const char* kAddSamples = R"sql(
INSERT INTO samples(series_id, run_time, run_id, block, value)
SELECT sid, $1, $2::bigint, b, v FROM unnest($3::bigint[], $4::integer[], $5::double precision[]) AS t(sid, b, v)
)sql";

// A PostgreSQL array literal of texts: {"a","b \"c\""} (every element quoted, " and \ escaped).
std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const auto& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (const char ch : item) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    out += '"';
  }
  return out + "}";
}

// An array literal of numbers ({1,2,3}), each in its shortest exact text.
template <class T>
std::string number_array(const std::vector<T>& items) {
  std::string out = "{";
  for (const auto& item : items) out += fmt::format("{}{}", out.size() > 1 ? "," : "", item);
  return out + "}";
}

class PostgresStore final : public StoreBackend {
 public:
  PostgresStore(const std::string& url, StoreOpening opening) : db_(url) {
    prepare_postgres_store(db_, opening == StoreOpening::make_when_absent);
  }

  IngestOutcome ingest(const std::string& bytes, const Result& run, const std::string& source) override;
  std::vector<StoredRun> runs() const override;
  std::vector<SeriesInfo> series() const override;
  std::map<std::int64_t, std::shared_ptr<const RunPoint>> run_points() const override;
  std::vector<std::pair<std::int64_t, double>> samples(std::int64_t series_id) const override;
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>> samples_of(
      const std::vector<std::int64_t>& series_ids) const override;
  std::vector<std::int64_t> series_of_run(std::int64_t run_id) const override;
  std::int64_t add_annotation(const Annotation& a) override;
  bool remove_annotation(std::int64_t id) override;
  std::vector<Annotation> annotations() const override;
  void replace_change_points(const std::vector<std::int64_t>& series_ids,
                             const std::vector<StoredChangePoint>& points) override;
  std::vector<StoredChangePoint> change_points() const override;

 private:
  PgConnection db_;
};

IngestOutcome PostgresStore::ingest(const std::string& bytes, const Result& run, const std::string& source) {
  IngestOutcome out;
  out.sha256 = sha256_hex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  const std::string model = model_sha256_of(run);
  const auto& c = run.context;

  db_.exec("BEGIN");
  try {
    // The ingest lock first, as SQLite's BEGIN IMMEDIATE: two ingests serialise, both land.
    db_.exec("SELECT pg_advisory_xact_lock($1::bigint)", {kIngestLock});
    const auto known = db_.exec("SELECT id FROM runs WHERE content_sha256 = $1", {out.sha256});
    if (known.rows() > 0) {
      out.already_stored = true;
      out.run_id = known.integer(0, 0);
      db_.exec("COMMIT");
      return out;
    }
    const auto inserted = db_.exec(
        "INSERT INTO runs(content_sha256, source, timestamp_utc, git_sha, git_dirty, hostname, device, "
        "fingerprint_slug, fingerprint, libtorch_version, model_sha256, conditions, result_schema, "
        "ingested_utc) VALUES($1, $2, $3, $4, $5::integer, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
        {out.sha256, source, c.timestamp_utc, c.git.sha, c.git.dirty ? "1" : "0", c.hostname, c.device,
         c.fingerprint_slug, nlohmann::json(c.fingerprint).dump(), c.fingerprint.libtorch_version, model,
         c.conditions.is_null() ? std::string("null") : c.conditions.dump(), run.schema_version, utc_now()});
    out.run_id = inserted.integer(0, 0);
    const std::string run_id = std::to_string(out.run_id);

    const auto cells = gate::extract_cells(run);
    std::vector<std::string> suites, cases, arms, metrics;
    for (const auto& cell : cells) {
      suites.push_back(cell.key.suite);
      cases.push_back(cell.key.case_name);
      arms.push_back(cell.key.arm);
      metrics.push_back(cell.key.metric);
    }
    const std::vector<std::string> keys{text_array(suites),  text_array(cases),  text_array(arms),
                                        text_array(metrics), c.fingerprint_slug, model};
    db_.exec(kAddSeries, keys);
    const auto ids = db_.exec(kSeriesIds, keys);
    if (ids.rows() != static_cast<int>(cells.size())) db_.fail("a series vanished inside its own transaction");
    std::vector<std::int64_t> sample_series;
    std::vector<int> blocks;
    std::vector<double> values;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      for (const auto& [block, value] : cells[i].by_block) {
        sample_series.push_back(ids.integer(static_cast<int>(i), 0));
        blocks.push_back(block);
        values.push_back(value);
      }
    }
    db_.exec(kAddSamples,
             {c.timestamp_utc, run_id, number_array(sample_series), number_array(blocks), number_array(values)});
    out.cells = cells.size();
    out.samples = values.size();
    const long die_after = die_after_samples();
    if (die_after > 0 && out.samples >= static_cast<std::size_t>(die_after)) raise(SIGKILL);  // inside the transaction
    db_.exec("COMMIT");
  } catch (...) {
    db_.rollback();
    throw;
  }
  return out;
}

std::vector<StoredRun> PostgresStore::runs() const {
  const auto q = db_.exec(
      "SELECT r.id, r.content_sha256, r.source, r.timestamp_utc, r.git_sha, r.hostname, r.device, "
      "r.fingerprint_slug, r.model_sha256, (SELECT count(*) FROM samples s WHERE s.run_id = r.id) "
      "FROM runs r ORDER BY r.timestamp_utc, r.id");
  std::vector<StoredRun> out;
  for (int i = 0; i < q.rows(); ++i) {
    out.push_back({q.integer(i, 0), q.text(i, 1), q.text(i, 2), q.text(i, 3), q.text(i, 4), q.text(i, 5), q.text(i, 6),
                   q.text(i, 7), q.text(i, 8), static_cast<std::size_t>(q.integer(i, 9))});
  }
  return out;
}

std::vector<SeriesInfo> PostgresStore::series() const {
  const auto q = db_.exec(
      "SELECT id, suite, case_name, arm, metric, fingerprint_slug, model_sha256 FROM series "
      "ORDER BY suite, case_name, arm, metric, fingerprint_slug, model_sha256");
  std::vector<SeriesInfo> out;
  for (int i = 0; i < q.rows(); ++i) {
    out.push_back(
        {q.integer(i, 0), q.text(i, 1), q.text(i, 2), q.text(i, 3), q.text(i, 4), q.text(i, 5), q.text(i, 6)});
  }
  return out;
}

std::map<std::int64_t, std::shared_ptr<const RunPoint>> PostgresStore::run_points() const {
  const auto q = db_.exec("SELECT id, timestamp_utc, git_sha, libtorch_version, fingerprint, conditions FROM runs");
  std::map<std::int64_t, std::shared_ptr<const RunPoint>> out;
  for (int i = 0; i < q.rows(); ++i) {
    out[q.integer(i, 0)] = std::make_shared<const RunPoint>(
        RunPoint{q.integer(i, 0), q.text(i, 1), q.text(i, 2), q.text(i, 3), q.text(i, 4), q.text(i, 5)});
  }
  return out;
}

std::vector<std::pair<std::int64_t, double>> PostgresStore::samples(std::int64_t series_id) const {
  const auto q =
      db_.exec("SELECT run_id, value FROM samples WHERE series_id = $1::bigint ORDER BY run_time, run_id, block",
               {std::to_string(series_id)});
  std::vector<std::pair<std::int64_t, double>> out;
  out.reserve(q.rows());
  for (int i = 0; i < q.rows(); ++i) out.emplace_back(q.integer(i, 0), q.real(i, 1));
  return out;
}

// One statement for many series: 10,000 series one query each spent 9 s of a 16 s detect in round
// trips (docs/history.md "Scale").
std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>> PostgresStore::samples_of(
    const std::vector<std::int64_t>& series_ids) const {
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>> out;
  for (const auto id : series_ids) out[id];
  const auto q = db_.exec(
      "SELECT series_id, run_id, value FROM samples WHERE series_id = ANY($1::bigint[]) "
      "ORDER BY series_id, run_time, run_id, block",
      {number_array(series_ids)});
  std::vector<std::pair<std::int64_t, double>>* current = nullptr;
  std::int64_t current_id = -1;
  for (int i = 0; i < q.rows(); ++i) {
    const auto id = q.integer(i, 0);
    if (id != current_id) current = &out[current_id = id];
    current->emplace_back(q.integer(i, 1), q.real(i, 2));
  }
  return out;
}

std::vector<std::int64_t> PostgresStore::series_of_run(std::int64_t run_id) const {
  const auto q = db_.exec("SELECT DISTINCT series_id FROM samples WHERE run_id = $1::bigint ORDER BY series_id",
                          {std::to_string(run_id)});
  std::vector<std::int64_t> out;
  for (int i = 0; i < q.rows(); ++i) out.push_back(q.integer(i, 0));
  return out;
}

std::int64_t PostgresStore::add_annotation(const Annotation& a) {
  const auto q = db_.exec(
      "INSERT INTO annotations(run_id, series_id, kind, note, created_utc) "
      "SELECT id, NULLIF($2::bigint, 0), $3, $4, $5 FROM runs WHERE id = $1::bigint RETURNING id",
      {std::to_string(a.run_id), std::to_string(a.series_id), a.kind, a.note, utc_now()});
  return q.rows() == 1 ? q.integer(0, 0) : 0;
}

bool PostgresStore::remove_annotation(std::int64_t id) {
  return db_.exec("DELETE FROM annotations WHERE id = $1::bigint RETURNING id", {std::to_string(id)}).rows() == 1;
}

std::vector<Annotation> PostgresStore::annotations() const {
  const auto q = db_.exec(
      "SELECT a.id, a.kind, COALESCE(a.run_id, 0), COALESCE(a.series_id, 0), a.note, a.created_utc, "
      "COALESCE(r.timestamp_utc, '') FROM annotations a LEFT JOIN runs r ON r.id = a.run_id ORDER BY a.id");
  std::vector<Annotation> out;
  for (int i = 0; i < q.rows(); ++i) {
    out.push_back(
        {q.integer(i, 0), q.text(i, 1), q.integer(i, 2), q.integer(i, 3), q.text(i, 4), q.text(i, 5), q.text(i, 6)});
  }
  return out;
}

void PostgresStore::replace_change_points(const std::vector<std::int64_t>& series_ids,
                                          const std::vector<StoredChangePoint>& points) {
  std::vector<std::int64_t> series, runs;
  std::vector<std::string> detected, verdicts;
  std::vector<double> ratio, low, high, p;
  for (const auto& c : points) {
    series.push_back(c.series_id);
    runs.push_back(c.run_id);
    detected.push_back(c.detected_utc);
    verdicts.push_back(c.verdict);
    ratio.push_back(c.ratio);
    low.push_back(c.ratio_low);
    high.push_back(c.ratio_high);
    p.push_back(c.p_value);
  }
  db_.exec("BEGIN");
  try {
    db_.exec("DELETE FROM change_points WHERE series_id = ANY($1::bigint[])", {number_array(series_ids)});
    db_.exec(
        "INSERT INTO change_points(series_id, run_id, detected_utc, ratio, ratio_low, ratio_high, p_value, verdict) "
        "SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::double precision[], "
        "$5::double precision[], $6::double precision[], $7::double precision[], $8::text[])",
        {number_array(series), number_array(runs), text_array(detected), number_array(ratio), number_array(low),
         number_array(high), number_array(p), text_array(verdicts)});
    db_.exec("COMMIT");
  } catch (...) {
    db_.rollback();
    throw;
  }
}

std::vector<StoredChangePoint> PostgresStore::change_points() const {
  const auto q = db_.exec(
      "SELECT series_id, run_id, detected_utc, ratio, ratio_low, ratio_high, p_value, verdict "
      "FROM change_points ORDER BY series_id, run_id");
  std::vector<StoredChangePoint> out;
  for (int i = 0; i < q.rows(); ++i) {
    out.push_back({q.integer(i, 0), q.integer(i, 1), q.text(i, 2), q.real(i, 3), q.real(i, 4), q.real(i, 5),
                   q.real(i, 6), q.text(i, 7)});
  }
  return out;
}

}  // namespace

std::unique_ptr<StoreBackend> open_postgres_store(const std::string& url, StoreOpening opening) {
  return std::make_unique<PostgresStore>(url, opening);
}

}  // namespace tipbench::history
