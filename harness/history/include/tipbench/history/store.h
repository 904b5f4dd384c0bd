// The history store: every run ingested once (by its file's SHA-256), with every block's sample of
// every cell (suite, case, arm, metric), keyed into series by the run's fingerprint and model, in
// an embedded SQLite file (WAL mode: readers never block an ingest). The JSON results stay the
// interchange format: the store can be rebuilt from them. Schema and limits: docs/history.md.
// Example:
//   tipbench::history::HistoryStore store("results/history.db");   // creates it; StoreError if bad
//   const auto outcome = store.ingest("run.json");                    // one transaction
//   for (const auto& run : store.runs()) fmt::print("{}\n", run.timestamp_utc);
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;

namespace tipbench::history {

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

class HistoryStore {
 public:
  // Opens the SQLite file at `path`, creating it and its schema when absent. Throws StoreError.
  explicit HistoryStore(const std::string& path);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  // Stores the result file's run in one transaction (a killed ingest leaves nothing), or nothing
  // when a run with the same bytes is stored. Throws InputError for a file that is no result
  // (read_result's), StoreError when the store refuses it. Waits up to 30 s for another ingest.
  IngestOutcome ingest(const std::string& result_path);

  std::vector<StoredRun> runs() const;  // oldest first (by the run's own time)

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace tipbench::history
