// HistoryStore::ingest: a run, its series and every block's sample in one write transaction, on
// either database (sql_database.h). Idempotent by the file's SHA-256.
#include "sql_database.h"
#include "tipbench/gate/cells.h"
#include "tipbench/gate/count_checks.h"
#include "tipbench/history/store.h"
#include "tipbench/history/test_seams.h"
#include "tipbench/results/result.h"
#include "tipbench/common/sha256.h"
#include "tipbench/environment/this_process.h"

#include <map>
#include <tuple>

namespace tipbench::history {

namespace {

testing::IngestProbe ingest_probe = nullptr;

std::string model_sha256_of(const Result& r) {  // a model file's; "" for the reference models
  if (!r.context.model_file.is_object()) return "";
  return r.context.model_file.value("sha256", "");
}

using CellName = std::tuple<std::string, std::string, std::string, std::string>;  // suite, case, arm, metric

// The ids of every series of one fingerprint and model, by cell: one statement.
std::map<CellName, std::int64_t> series_ids(const SqlDatabase& db, const std::string& slug, const std::string& model) {
  std::map<CellName, std::int64_t> out;
  db.query("SELECT id, suite, case_name, arm, metric FROM series WHERE fingerprint_slug = $1 AND model_sha256 = $2",
           {slug, model}, [&](const SqlRow& row) {
             out[{row.text(1), row.text(2), row.text(3), row.text(4)}] = row.integer(0);
           });
  return out;
}

// Counted work (schema 1.14) as series of their own, one sample per run (block 0): every gated
// count metric of every ok arm whose counted steps agreed. Zero is a count too (syncs 0 -> 1).
std::vector<gate::Cell> count_cells(const Result& r) {
  std::vector<gate::Cell> out;
  for (const auto& s : r.suites) {
    for (const auto& c : s.cases) {
      for (const auto& a : c.arms) {
        const StepCounts* counts = a.status == ArmStatus::ok ? counts_of(a) : nullptr;
        if (!counts || !counts->error.empty() || !counts->steady) continue;
        for (const auto& metric : gate::count_metrics()) {
          if (const auto value = gate::count_value(*counts, metric)) {
            out.push_back({.key = {s.name, c.name, a.arm, metric}, .by_block = {{0, *value}}});
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

void testing::set_ingest_probe(IngestProbe probe) { ingest_probe = probe; }

IngestOutcome HistoryStore::ingest(const std::string& bytes, const Result& run, const std::string& source) {
  run_points_.reset();
  IngestOutcome out;
  out.sha256 = sha256_hex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  const std::string model = model_sha256_of(run);
  const auto& c = run.context;
  db_->in_write_transaction([&] {
    if (const auto known = db_->first_integer("SELECT id FROM runs WHERE content_sha256 = $1", {out.sha256})) {
      out.already_stored = true;
      out.run_id = *known;
      return;
    }
    out.run_id = *db_->first_integer(
        "INSERT INTO runs(content_sha256, source, timestamp_utc, git_sha, git_dirty, hostname, device, "
        "fingerprint_slug, fingerprint, libtorch_version, model_sha256, conditions, result_schema, ingested_utc) "
        "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
        {out.sha256, source, c.timestamp_utc, c.git.sha, std::int64_t{c.git.dirty}, c.hostname, c.device,
         c.fingerprint_slug, nlohmann::json(c.fingerprint).dump(), c.fingerprint.libtorch_version, model,
         c.conditions.is_null() ? std::string("null") : c.conditions.dump(), run.schema_version, utc_timestamp()});

    auto cells = gate::extract_cells(run);
    for (auto& cell : count_cells(run)) cells.push_back(std::move(cell));
    std::vector<SqlValues> series;
    for (const auto& cell : cells) {
      const auto& k = cell.key;
      series.push_back({k.suite, k.case_name, k.arm, k.metric, c.fingerprint_slug, model});
    }
    db_->insert_rows("series", {"suite", "case_name", "arm", "metric", "fingerprint_slug", "model_sha256"}, series,
                     OnConflict::skip);
    const auto ids = series_ids(*db_, c.fingerprint_slug, model);
    std::vector<SqlValues> samples;
    for (const auto& cell : cells) {
      const auto id = ids.find({cell.key.suite, cell.key.case_name, cell.key.arm, cell.key.metric});
      if (id == ids.end()) throw StoreError("a series vanished inside its own transaction");
      for (const auto& [block, value] : cell.by_block) {
        samples.push_back({id->second, c.timestamp_utc, out.run_id, std::int64_t{block}, value});
      }
    }
    db_->insert_rows("samples", {"series_id", "run_time", "run_id", "block", "value"}, samples, OnConflict::fail);
    out.cells = cells.size();
    out.samples = samples.size();
    if (ingest_probe) ingest_probe(out.samples);
  });
  return out;
}

}  // namespace tipbench::history
