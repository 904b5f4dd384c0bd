// The history store (tipbench/history/store.h) on both backends, real databases: SQLite files and
// a throw-away PostgreSQL server (postgres_server.h). Every block stored once, ingest idempotent
// and atomic (a killed ingest leaves nothing), two ingests at once both land, series and trends
// read back exactly and alike on both, and a store that is not this one is refused with the
// reason. PostgreSQL's connection and server errors are one line, the password masked.
#include "tipbench/gate/cells.h"
#include "tipbench/history/store.h"
#include "tipbench/history/test_seams.h"
#include "tipbench/results/result.h"

#include "postgres_server.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "text_match.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <tuple>

namespace {

namespace fs = std::filesystem;
namespace h = tipbench::history;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::pg_value;
using tipbench::testing::PostgresServer;
using tipbench::testing::synthetic_run;

std::string write_run(const fs::path& dir, const std::string& name, std::uint64_t seed,
                      const std::string& timestamp = "2026-11-21T09:00:00Z") {
  const auto path = (dir / name).string();
  tipbench::write_result_atomically(synthetic_run({.cv = 0.01, .seed = seed, .timestamp = timestamp}), path);
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
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
    }
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

// The tests every store must pass, once per backend: HistoryStore.<Test>/sqlite and /postgresql.
// Each has a fresh, empty store: a SQLite file not made yet, or a new database on the test server.
class HistoryStore : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fresh_scratch_dir("history_" + name);
    if (GetParam() == "sqlite") {
      store_ = (dir_ / "history.db").string();
      return;
    }
    try {
      store_ = PostgresServer::instance().fresh_database(name);
    } catch (const std::exception& e) {
      GTEST_FAIL() << e.what();  // not skipped: CI installs the server (scripts/bootstrap.sh --test)
    }
  }
  fs::path dir_;
  std::string store_;  // the store's location, as `tipbench history --store` takes it
};

INSTANTIATE_TEST_SUITE_P(, HistoryStore, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST_P(HistoryStore, StoresEveryBlockOnceAndAgainIsANoOp) {
  const auto run = write_run(dir_, "a.json", 1);
  h::HistoryStore store(store_);
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
  EXPECT_EQ(store.device_of_runs(), (std::map<std::int64_t, std::string>{{first.run_id, result.context.device}}));
}

// Two processes open an empty store (both make its schema) and ingest at once.
TEST_P(HistoryStore, TwoIngestsAtOnceBothLand) {
  const auto a = write_run(dir_, "a.json", 1), b = write_run(dir_, "b.json", 2);
  std::vector<pid_t> children;
  for (const auto& run : {a, b}) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 1;
      try {
        h::HistoryStore store(store_);
        code = store.ingest(run).already_stored ? 3 : 0;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
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
  EXPECT_EQ(h::HistoryStore(store_).runs().size(), 2u);
}

TEST_P(HistoryStore, AKilledIngestLeavesNothing) {
  const auto kept = write_run(dir_, "kept.json", 1), killed = write_run(dir_, "killed.json", 2);
  h::HistoryStore(store_).ingest(kept);
  const int code = in_child([&] {
    h::testing::set_ingest_probe([](std::size_t) { raise(SIGKILL); });  // its samples written, not committed
    h::HistoryStore(store_).ingest(killed);
    return 0;
  });
  EXPECT_EQ(code, 128 + SIGKILL);
  h::HistoryStore store(store_);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);  // the run stored before is there, nothing of the killed one
  EXPECT_NE(runs[0].source.find("kept.json"), std::string::npos);
  EXPECT_FALSE(store.ingest(killed).already_stored);  // and it can be ingested again
  EXPECT_EQ(store.runs().size(), 2u);
}

TEST_P(HistoryStore, AFileThatIsNoResultIsAnInputError) {
  const auto bad = (dir_ / "bad.json").string();
  std::ofstream(bad) << "{\"schema_version\": \"1.6\"}";
  h::HistoryStore store(store_);
  EXPECT_THROW(store.ingest(bad), tipbench::InputError);
  EXPECT_TRUE(store.runs().empty());
}

// Annotations name a stored run (and a series, or all of them), are listed with the run's time,
// and can be removed; one on a run that is not there is the user's input error.
TEST_P(HistoryStore, AnnotationsAreStoredListedAndRemoved) {
  h::HistoryStore store(store_);
  const auto run = store.ingest(write_run(dir_, "a.json", 1, "2026-11-21T09:00:00Z")).run_id;
  const auto series = store.series_of_run(run);
  ASSERT_EQ(series.size(), store.series().size());
  const auto exclude = store.annotate(h::kExcludeRun, run, {}, "runner had ECC errors");
  const auto expected = store.annotate(h::kExpectedChange, run, {series[0], series[1]}, "LibTorch upgrade");
  ASSERT_EQ(exclude.size(), 1u);
  ASSERT_EQ(expected.size(), 2u);
  const auto all = store.annotations();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].kind, h::kExcludeRun);
  EXPECT_EQ(all[0].series_id, 0);
  EXPECT_EQ(all[0].note, "runner had ECC errors");
  EXPECT_EQ(all[0].run_time, "2026-11-21T09:00:00Z");
  EXPECT_EQ(all[2].kind, h::kExpectedChange);
  EXPECT_EQ(all[2].series_id, series[1]);
  EXPECT_EQ(all[2].run_id, run);
  EXPECT_TRUE(store.remove_annotation(expected[0]));
  EXPECT_FALSE(store.remove_annotation(expected[0]));
  EXPECT_EQ(store.annotations().size(), 2u);
  EXPECT_THROW(store.annotate(h::kExcludeRun, run + 100, {}, "no such run"), tipbench::InputError);
  EXPECT_EQ(store.annotations().size(), 2u);
}

// Change points kept by detect --record: replaced per series, atomically; others' kept.
TEST_P(HistoryStore, ChangePointsReplaceThoseOfTheSeriesExamined) {
  h::HistoryStore store(store_);
  const auto run = store.ingest(write_run(dir_, "a.json", 1)).run_id;
  const auto series = store.series_of_run(run);
  ASSERT_GE(series.size(), 2u);
  store.replace_change_points({series[0], series[1]},
                              {{series[0], run, "2026-11-26T10:00:00Z", 0.9, 0.88, 0.92, 1e-5, "REGRESSION"},
                               {series[1], run, "2026-11-26T10:00:00Z", 1.1, 1.05, 1.15, 2e-4, "improvement"}});
  auto kept = store.change_points();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].series_id, series[0]);
  EXPECT_DOUBLE_EQ(kept[0].ratio_low, 0.88);
  EXPECT_DOUBLE_EQ(kept[0].p_value, 1e-5);
  EXPECT_EQ(kept[0].verdict, "REGRESSION");
  EXPECT_EQ(kept[1].detected_utc, "2026-11-26T10:00:00Z");
  // Detect again over series[0] only: its point goes (none found now), series[1]'s stays.
  store.replace_change_points({series[0]}, {});
  kept = store.change_points();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].series_id, series[1]);
}

// Every cell of every run is a series, its trend every block's value, bit for bit, oldest run first.
TEST_P(HistoryStore, SeriesAndTrendsGiveBackEveryBlockExactly) {
  const auto late = write_run(dir_, "late.json", 1, "2026-11-22T09:00:00Z");
  const auto early = write_run(dir_, "early.json", 2, "2026-11-21T09:00:00Z");
  h::HistoryStore store(store_);
  const auto late_id = store.ingest(late).run_id, early_id = store.ingest(early).run_id;
  // Each run's cells by key: what its trend points must hold.
  std::map<tipbench::gate::CellKey, std::vector<double>> late_values, early_values;
  for (const auto& cell : tipbench::gate::extract_cells(tipbench::read_result(late))) {
    late_values[cell.key] = cell.values();
  }
  for (const auto& cell : tipbench::gate::extract_cells(tipbench::read_result(early))) {
    early_values[cell.key] = cell.values();
  }
  const auto series = store.series();
  ASSERT_EQ(series.size(), late_values.size());
  auto key_of = [](const h::SeriesInfo& s) { return tipbench::gate::CellKey{s.suite, s.case_name, s.arm, s.metric}; };
  for (std::size_t i = 1; i < series.size(); ++i) EXPECT_LT(key_of(series[i - 1]), key_of(series[i]));
  for (const auto& s : series) {
    const auto key = key_of(s);
    ASSERT_TRUE(late_values.contains(key)) << key.label();
    const auto trend = store.trend(s.id);
    ASSERT_EQ(trend.size(), 2u) << key.label();
    EXPECT_EQ(trend[0]->run_id, early_id);  // oldest run first, whatever the order of ingest
    EXPECT_EQ(trend[0].samples, early_values[key]) << key.label();
    EXPECT_EQ(trend[1]->run_id, late_id);
    EXPECT_EQ(trend[1].samples, late_values[key]) << key.label();
    EXPECT_EQ(trend[1]->timestamp_utc, "2026-11-22T09:00:00Z");
  }
}

// SQLite files only: the file's journal mode, and files that are not this store.

TEST(HistoryStoreSqlite, ItsFileIsWalModeWithTheSchemaAndItsIndexes) {
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

TEST(HistoryStoreSqlite, RefusesAFileThatIsNotThisStore) {
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

// PostgreSQL only: the marker table, databases that are not this store, the server's errors.
class HistoryStorePostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      server_ = &PostgresServer::instance();
    } catch (const std::exception& e) {
      GTEST_FAIL() << e.what();
    }
  }
  std::string fresh_database() {
    return server_->fresh_database(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  PostgresServer* server_ = nullptr;
};

TEST_F(HistoryStorePostgres, ItsDatabaseHasTheSchemaTheMarkerAndTheIndexes) {
  const auto url = fresh_database();
  { h::HistoryStore store(url); }
  EXPECT_EQ(pg_value(url,
                     "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables "
                     "WHERE schemaname = 'public'"),
            "annotations,change_points,runs,samples,series,tipbench_store");
  EXPECT_EQ(pg_value(url, "SELECT application || ' ' || schema_version FROM tipbench_store"),
            "tipbench history store 1");
  EXPECT_EQ(pg_value(url,
                     "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE "
                     "schemaname = 'public' AND indexname IN ('runs_by_time', 'samples_by_run', "
                     "'change_points_by_series')"),
            "change_points_by_series,runs_by_time,samples_by_run");
  EXPECT_EQ(pg_value(url,
                     "SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM pg_index i "
                     "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) "
                     "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
                     "WHERE i.indrelid = 'samples'::regclass AND i.indisprimary"),
            "series_id,run_time,run_id,block");
}

TEST_F(HistoryStorePostgres, RefusesADatabaseThatIsNotThisStore) {
  const auto foreign = fresh_database();
  pg_value(foreign, "CREATE TABLE t(x INTEGER)");
  EXPECT_TRUE(contains(refusal(foreign), "a PostgreSQL database of another application (1 tables")) << refusal(foreign);
  EXPECT_EQ(pg_value(foreign, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), "1");  // untouched

  const auto other_marker = fresh_database();
  pg_value(other_marker,
           "CREATE TABLE tipbench_store(application TEXT, schema_version INTEGER); "
           "INSERT INTO tipbench_store VALUES('someone else', 1)");
  EXPECT_TRUE(contains(refusal(other_marker), "naming 'someone else'), not a tipbench history store"))
      << refusal(other_marker);

  const auto newer = fresh_database();
  { h::HistoryStore store(newer); }
  pg_value(newer, "UPDATE tipbench_store SET schema_version = 99");
  EXPECT_TRUE(contains(refusal(newer), "schema 99, made by a newer tipbench")) << refusal(newer);
}

// One line each, the URL's password masked: a closed port, a wrong password, a missing database.
TEST_F(HistoryStorePostgres, ConnectionErrorsAreOneLineWithThePasswordMasked) {
  const std::string port = std::to_string(server_->port());
  auto check = [](const std::string& message, const std::string& expected_start, const std::string& why) {
    EXPECT_EQ(message.rfind(expected_start, 0), 0u) << message;
    EXPECT_TRUE(contains(message, why)) << message;
    EXPECT_FALSE(contains(message, "\n")) << message;
    EXPECT_FALSE(contains(message, PostgresServer::kPassword)) << message;
    EXPECT_FALSE(contains(message, "wrong-pw-42")) << message;
  };
  // A port nobody listens on (taken from the kernel, then closed): refused at once.
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(s);
  const std::string closed = std::to_string(ntohs(a.sin_port));
  const auto started = std::chrono::steady_clock::now();
  check(refusal(fmt::format("postgresql://tipbench:{}@127.0.0.1:{}/db", PostgresServer::kPassword, closed)),
        fmt::format("postgresql://tipbench:***@127.0.0.1:{}/db: cannot connect: connection to server at", closed),
        "Connection refused");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));

  check(refusal(fmt::format("postgresql://tipbench:wrong-pw-42@127.0.0.1:{}/postgres", port)),
        fmt::format("postgresql://tipbench:***@127.0.0.1:{}/postgres: cannot connect: ", port),
        "password authentication failed for user \"tipbench\"");
  check(refusal(fmt::format("postgres://tipbench@127.0.0.1:{}/postgres?password=wrong-pw-42&sslmode=disable", port)),
        fmt::format("postgres://tipbench@127.0.0.1:{}/postgres?password=***&sslmode=disable: cannot connect: ", port),
        "password authentication failed");
  check(refusal(server_->url("no_such_db")),
        fmt::format("postgresql://tipbench:***@127.0.0.1:{}/no_such_db: cannot connect: ", port),
        "database \"no_such_db\" does not exist");
}

// A server that takes the connection and never answers: the connect timeout bounds the wait (the
// URL's, here 2 s; 10 s by default).
TEST_F(HistoryStorePostgres, ASilentServerFailsWithinTheConnectTimeout) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(s, 4), 0);  // the kernel completes the handshake; nobody ever reads
  ASSERT_EQ(::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const auto started = std::chrono::steady_clock::now();
  const auto message =
      refusal(fmt::format("postgresql://tipbench@127.0.0.1:{}/db?connect_timeout=2", ntohs(a.sin_port)));
  const auto waited = std::chrono::steady_clock::now() - started;
  ::close(s);
  EXPECT_TRUE(contains(message, ": cannot connect: ")) << message;
  EXPECT_GE(waited, std::chrono::milliseconds(1500));
  EXPECT_LT(waited, std::chrono::seconds(8));
}

// The server refuses a sample mid-ingest: a StoreError of one line, nothing of the run stored,
// and the same store ingests it once the cause is gone.
TEST_F(HistoryStorePostgres, AServerErrorMidIngestRollsBackAndTheStoreStaysUsable) {
  const auto dir = fresh_scratch_dir("history_pg_server_error");
  const auto run = write_run(dir, "a.json", 1);
  const auto url = fresh_database();
  h::HistoryStore store(url);
  pg_value(url,
           "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
           "$$ BEGIN RAISE EXCEPTION 'disk quota exceeded (test)'; END $$; "
           "CREATE TRIGGER refuse BEFORE INSERT ON samples FOR EACH ROW EXECUTE FUNCTION refuse()");
  try {
    store.ingest(run);
    ADD_FAILURE() << "the ingest went through";
  } catch (const h::StoreError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "postgresql://tipbench:***@")) << message;
    EXPECT_TRUE(contains(message, ": disk quota exceeded (test)")) << message;
    EXPECT_FALSE(contains(message, "\n")) << message;
  }
  EXPECT_TRUE(store.runs().empty());
  pg_value(url, "DROP TRIGGER refuse ON samples");
  EXPECT_FALSE(store.ingest(run).already_stored);
  EXPECT_EQ(store.runs().size(), 1u);
}

// The same runs in both stores read back the same: runs, series and every trend.
TEST_F(HistoryStorePostgres, ReadsBackWhatSqliteReadsBack) {
  const auto dir = fresh_scratch_dir("history_pg_like_sqlite");
  h::HistoryStore sqlite((dir / "history.db").string()), postgres(fresh_database());
  for (int i = 0; i < 3; ++i) {
    const auto run = write_run(dir, fmt::format("r{}.json", i), i + 1, fmt::format("2026-11-2{}T09:00:00Z", 3 - i));
    EXPECT_EQ(sqlite.ingest(run).run_id, postgres.ingest(run).run_id);
  }
  auto runs_text = [](const h::HistoryStore& s) {
    std::string out;
    for (const auto& r : s.runs()) {
      out += fmt::format("{} {} {} {} {} {} {} {} {} {}\n", r.id, r.sha256, r.source, r.timestamp_utc, r.git_sha,
                         r.hostname, r.device, r.fingerprint_slug, r.model_sha256, r.samples);
    }
    return out;
  };
  auto series_text = [](const h::HistoryStore& s) {
    std::string out;
    for (const auto& x : s.series()) {
      out += fmt::format("{} {} {} {} {} {} {}\n", x.id, x.suite, x.case_name, x.arm, x.metric, x.fingerprint_slug,
                         x.model_sha256);
    }
    return out;
  };
  EXPECT_EQ(runs_text(postgres), runs_text(sqlite));
  EXPECT_EQ(series_text(postgres), series_text(sqlite));
  for (const auto& s : sqlite.series()) {
    const auto want = sqlite.trend(s.id), got = postgres.trend(s.id);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(std::tie(got[i]->run_id, got[i]->timestamp_utc, got[i]->git_sha, got[i]->libtorch_version,
                         got[i]->fingerprint, got[i]->conditions, got[i].samples),
                std::tie(want[i]->run_id, want[i]->timestamp_utc, want[i]->git_sha, want[i]->libtorch_version,
                         want[i]->fingerprint, want[i]->conditions, want[i].samples));
    }
  }
}

// The mask reads a URL as libpq does (the user info ends at the first '@' before any '/'), so a
// password holding '?' or '#' is masked too, and so are ?password= and ?sslpassword=; whatever
// libpq's own parse calls a password never reaches a message (security review 2026-11-27).
TEST(MaskPassword, HidesEveryPasswordLibpqWouldRead) {
  for (const auto& [url, secret] : std::vector<std::pair<std::string, std::string>>{
           {"postgresql://bench:s3?cret@db/tip", "s3?cret"},
           {"postgresql://bench:s3#cr?t@db:5433/tip", "s3#cr?t"},
           {"postgres://u:p%40ss@db/x", "p%40ss"},
           {"postgresql://u@db/tip?sslmode=require&sslpassword=k3y", "k3y"},
           {"postgresql://u:pw1@h/d?password=pw2&application_name=a", "pw2"},
           {"postgresql://u@h/d?PASSWORD=loud", "loud"}}) {
    const std::string shown = tipbench::history::mask_password(url);
    EXPECT_FALSE(contains(shown, secret)) << url << " -> " << shown;
    EXPECT_TRUE(contains(shown, "***")) << url << " -> " << shown;
  }
  EXPECT_EQ(tipbench::history::mask_password("postgresql://bench:s3?cret@db/tip"), "postgresql://bench:***@db/tip");
  EXPECT_FALSE(contains(tipbench::history::mask_password("postgresql://u:pw1@h/d?password=pw2"), "pw1"));
  EXPECT_EQ(tipbench::history::mask_password("results/history?password=x.db"), "results/history?password=x.db")
      << "a file path is a path";
}

}  // namespace
