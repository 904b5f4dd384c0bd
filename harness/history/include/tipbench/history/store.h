// The history store: every run ingested once (by its file's SHA-256), with every block's sample of
// every cell (suite, case, arm, metric), keyed into series by the run's fingerprint and model, in
// an embedded SQLite file (WAL mode: readers never block an ingest) or a fleet's PostgreSQL server
// (a postgresql:// URL), same schema. The JSON results stay the interchange format: the store can
// be rebuilt from them. Schema and limits: docs/history.md.
// Example:
//   tipbench::history::HistoryStore store("results/history.db");   // creates it; StoreError if bad
//   const auto outcome = store.ingest("run.json");                    // one transaction
//   for (const auto& run : store.runs()) fmt::print("{}\n", run.timestamp_utc);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tipbench {
struct Result;
}

namespace tipbench::history {

class SqlDatabase;

// The store cannot be used (not SQLite, another application's database, a newer schema, not
// writable): one line naming it. The CLI's exit 2.
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct IngestOutcome {
  std::string sha256;  // of the file's bytes: the run's identity in the store
  bool already_stored = false;
  std::int64_t run_id = 0;
  std::size_t cells = 0;    // series this run adds samples to
  std::size_t samples = 0;  // one per cell and block
};

struct StoredRun {
  std::int64_t id = 0;
  std::string sha256, source, timestamp_utc, git_sha, hostname, device, fingerprint_slug, model_sha256;
  std::size_t samples = 0;
};

// One series: a cell (suite, case, arm, metric) on one fingerprint and one model.
struct SeriesInfo {
  std::int64_t id = 0;
  std::string suite, case_name, arm, metric, fingerprint_slug, model_sha256;
};

// What the detector and the dashboard show of a run beside its samples.
struct RunPoint {
  std::int64_t run_id = 0;
  std::string timestamp_utc, git_sha, libtorch_version;
  std::string fingerprint;  // the run's fingerprint, JSON text
  std::string conditions;   // the run's conditions of measurement, JSON text ("null": none recorded)
};

// One run's samples of one series. The run's record is shared by its points in every series (a
// copy per point cost gigabytes over 10,000 series of 500 runs): point->timestamp_utc.
struct TrendPoint {
  std::shared_ptr<const RunPoint> run;
  std::int64_t series_id = 0;   // the stored series (one software stack's) the samples are of
  std::vector<double> samples;  // by block
  const RunPoint* operator->() const { return run.get(); }
};

// A note on a stored run (docs/history.md "Annotations"). `exclude_run` leaves the run out of every
// series it is in (a broken machine, a mis-configured night); `expected_change` marks a change at
// that run as intended (a known upgrade): detect lists it as `expected`, never as a new regression.
struct Annotation {
  std::int64_t id = 0;
  std::string kind;  // kExcludeRun or kExpectedChange
  std::int64_t run_id = 0;
  std::int64_t series_id = 0;  // 0: every series of the run
  std::string note, created_utc;
  std::string run_time;  // the run's own time (read back; not written)
};
// A change point as `history detect --record` keeps it (the store's change_points table).
struct StoredChangePoint {
  std::int64_t series_id = 0;  // the stored series of the first run after the change
  std::int64_t run_id = 0;     // that run
  std::string detected_utc;
  double ratio = 1, ratio_low = 1, ratio_high = 1, p_value = 1;
  std::string verdict;  // detect's: REGRESSION, regression, improvement or expected
};

inline constexpr const char* kExcludeRun = "exclude_run";
inline constexpr const char* kExpectedChange = "expected_change";

// True for a location that names a PostgreSQL server (postgresql:// or postgres://).
bool is_postgres_url(const std::string& location);
// The location with a URL's passwords (user:PASSWORD@, ?password=, ?sslpassword=) replaced by ***
// as libpq reads the URL (the user info ends at the first '@' before any '/'), and then anything
// libpq's own parse (PQconninfoParse) calls a password or sslpassword: what every message shows.
// A file path comes back as it is.
std::string mask_password(const std::string& location);

// Whether opening a store may make it: a reader (runs, detect, report) must not turn a mistyped
// database into an empty history.
enum class StoreOpening { make_when_absent, existing_only };

class HistoryStore {
 public:
  // Opens the store at `location`: a SQLite file (made with its schema when absent) or a
  // postgresql:// URL (the schema made when the database has none). existing_only: a database
  // without the schema is a StoreError (a SQLite file that is not there is the caller's check).
  // Throws StoreError.
  explicit HistoryStore(const std::string& location, StoreOpening opening = StoreOpening::make_when_absent);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  // Stores the result file's run in one transaction (a killed ingest leaves nothing), or nothing
  // when a run with the same bytes is stored. Throws InputError for a file that is no result
  // (read_result's), StoreError when the store refuses it. Waits up to 30 s for another ingest.
  IngestOutcome ingest(const std::string& result_path);
  // The same for a file already read and parsed.
  IngestOutcome ingest(const std::string& bytes, const Result& run, const std::string& source);

  std::vector<StoredRun> runs() const;                         // oldest first (by the run's own time)
  std::map<std::int64_t, std::string> device_of_runs() const;  // run id -> its device ("cuda:0")
  std::vector<SeriesInfo> series() const;
  std::vector<TrendPoint> trend(std::int64_t series_id) const;  // oldest run first
  // trend() of each series, read together (series id -> its trend).
  std::map<std::int64_t, std::vector<TrendPoint>> trends(const std::vector<std::int64_t>& series_ids) const;

  // One annotation per series id (none: one for the whole run); their ids. Throws InputError when
  // the store has no such run, StoreError when the store fails.
  std::vector<std::int64_t> annotate(const std::string& kind, std::int64_t run_id,
                                     const std::vector<std::int64_t>& series_ids, const std::string& note);
  bool remove_annotation(std::int64_t id);
  std::vector<Annotation> annotations() const;
  std::vector<std::int64_t> series_of_run(std::int64_t run_id) const;

  // The change points detect found for these series replace those kept before (atomically).
  void replace_change_points(const std::vector<std::int64_t>& series_ids, const std::vector<StoredChangePoint>& points);
  std::vector<StoredChangePoint> change_points() const;

 private:
  std::unique_ptr<SqlDatabase> db_;  // the database: SQLite or PostgreSQL (src/sql_database.h)
  // The runs' columns, read once for all the trends a reader asks for (a fingerprint per sample
  // row would cost PostgreSQL gigabytes over 10,000 series); dropped by an ingest.
  mutable std::optional<std::map<std::int64_t, std::shared_ptr<const RunPoint>>> run_points_;
  std::vector<TrendPoint> assemble(const std::vector<std::pair<std::int64_t, double>>& samples) const;
  std::map<std::int64_t, std::shared_ptr<const RunPoint>> read_run_points() const;
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>> samples_of(
      const std::vector<std::int64_t>& series_ids) const;
  std::int64_t add_annotation(const Annotation& a);
};

}  // namespace tipbench::history
