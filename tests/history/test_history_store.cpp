// The history store (tipbench/history/store.h) on real SQLite files: every block stored once,
// ingest idempotent and atomic (a killed ingest leaves nothing), two ingests at once both land,
// and a file that is not this store is refused with the reason.
#include "tipbench/history/store.h"
#include "tipbench/result.h"

#include "scratch_dir.h"
#include "synthetic.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace {

namespace fs = std::filesystem;
namespace h = tipbench::history;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::synthetic_run;

std::string write_run(const fs::path& dir, const std::string& name, std::uint64_t seed) {
  const auto path = (dir / name).string();
  tipbench::write_result_atomically(synthetic_run({.cv = 0.01, .seed = seed}), path);
  return path;
}

std::string refusal(const std::string& store) {
  try {
    h::HistoryStore s(store);
  } catch (const h::StoreError& e) {
    return e.what();
  }
  return "";
}

// Runs `body` in a child process; its exit status (or 128 + the signal that killed it).
template <class Body>
int in_child(Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 1;
    try {
      code = body();
    } catch (...) {
    }
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

TEST(HistoryStore, StoresEveryBlockOnceAndAgainIsANoOp) {
  const auto dir = fresh_scratch_dir("history_once");
  const auto run = write_run(dir, "a.json", 1);
  h::HistoryStore store((dir / "history.db").string());
  const auto first = store.ingest(run);
  EXPECT_FALSE(first.already_stored);
  EXPECT_EQ(first.sha256.size(), 64u);
  EXPECT_GT(first.cells, 0u);
  const auto result = tipbench::read_result(run);
  EXPECT_EQ(first.samples, first.cells * static_cast<std::size_t>(result.context.settings.blocks));
  const auto again = store.ingest(run);
  EXPECT_TRUE(again.already_stored);
  EXPECT_EQ(again.run_id, first.run_id);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].samples, first.samples);
  EXPECT_EQ(runs[0].fingerprint_slug, result.context.fingerprint_slug);
  EXPECT_EQ(runs[0].timestamp_utc, result.context.timestamp_utc);
}

TEST(HistoryStore, ItsFileIsWalModeWithTheSchemaAndItsIndexes) {
  const auto dir = fresh_scratch_dir("history_schema");
  const auto db_path = (dir / "history.db").string();
  { h::HistoryStore store(db_path); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  auto one = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK) << sql;
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW) << sql;
    std::string v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return v;
  };
  EXPECT_EQ(one("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(
      one("SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)"),
      "annotations,change_points,runs,samples,series");
  EXPECT_EQ(one("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_by_time'"), "1");
  sqlite3_close(db);
}

TEST(HistoryStore, TwoIngestsAtOnceBothLand) {
  const auto dir = fresh_scratch_dir("history_concurrent");
  const auto db_path = (dir / "history.db").string();
  const auto a = write_run(dir, "a.json", 1), b = write_run(dir, "b.json", 2);
  std::vector<pid_t> children;
  for (const auto& run : {a, b}) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 1;
      try {
        h::HistoryStore store(db_path);
        code = store.ingest(run).already_stored ? 3 : 0;
      } catch (...) {
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(h::HistoryStore(db_path).runs().size(), 2u);
}

TEST(HistoryStore, AKilledIngestLeavesNothing) {
  const auto dir = fresh_scratch_dir("history_killed");
  const auto db_path = (dir / "history.db").string();
  const auto kept = write_run(dir, "kept.json", 1), killed = write_run(dir, "killed.json", 2);
  h::HistoryStore(db_path).ingest(kept);
  const int code = in_child([&] {
    ::setenv("TIPBENCH_HISTORY_TEST_DIE_AFTER_SAMPLES", "3", 1);
    h::HistoryStore(db_path).ingest(killed);
    return 0;
  });
  EXPECT_EQ(code, 128 + SIGKILL);
  h::HistoryStore store(db_path);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);  // the run stored before is there, nothing of the killed one
  EXPECT_NE(runs[0].source.find("kept.json"), std::string::npos);
  EXPECT_FALSE(store.ingest(killed).already_stored);  // and it can be ingested again
  EXPECT_EQ(store.runs().size(), 2u);
}

TEST(HistoryStore, RefusesAFileThatIsNotThisStore) {
  const auto dir = fresh_scratch_dir("history_refuse");
  const auto text = (dir / "notes.db").string();
  std::ofstream(text) << "these are notes, not a database\n";
  EXPECT_NE(refusal(text).find("not a tipbench history store (file is not a database)"), std::string::npos)
      << refusal(text);

  const auto foreign = (dir / "foreign.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_NE(refusal(foreign).find("a SQLite database of another application"), std::string::npos) << refusal(foreign);

  const auto newer = (dir / "newer.db").string();
  { h::HistoryStore store(newer); }
  ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_NE(refusal(newer).find("schema 99, made by a newer tipbench"), std::string::npos) << refusal(newer);
}

TEST(HistoryStore, AFileThatIsNoResultIsAnInputError) {
  const auto dir = fresh_scratch_dir("history_bad_run");
  const auto bad = (dir / "bad.json").string();
  std::ofstream(bad) << "{\"schema_version\": \"1.6\"}";
  h::HistoryStore store((dir / "history.db").string());
  EXPECT_THROW(store.ingest(bad), tipbench::InputError);
  EXPECT_TRUE(store.runs().empty());
}

}  // namespace
