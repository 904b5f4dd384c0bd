// `tipbench history ingest|runs` as a user runs it: the real binary in a child process; exit
// codes and messages as docs/cli.md says; a bad file in the list stores nothing.
#include "tipbench/history/store.h"
#include "tipbench/results/result.h"

#include "child_process.h"
#include "postgres_server.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "test_paths.h"
#include "text_match.h"
#include "tipbench_cmd.h"

#include <gtest/gtest.h>

#include <fstream>

namespace {

namespace fs = std::filesystem;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::synthetic_run;
using tipbench::testing::tipbench_cmd;

TEST(HistoryCli, IngestsOnceListsAndRefusesBadInputWithExitTwo) {
  const auto dir = fresh_scratch_dir("history_cli");
  const auto a = (dir / "a.json").string(), b = (dir / "b.json").string();
  tipbench::write_result_atomically(synthetic_run({.seed = 1}), a);
  tipbench::write_result_atomically(synthetic_run({.seed = 2}), b);
  const auto store = (dir / "store" / "history.db").string();  // its folder is made

  const auto first = tipbench_cmd(dir, {"history", "--store", store, "ingest", a});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(contains(first.out, "stored as run 1")) << first.out;
  const auto both = tipbench_cmd(dir, {"history", "--store", store, "ingest", a, b});
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_TRUE(contains(both.out, "already stored (run 1")) << both.out;
  EXPECT_TRUE(contains(both.out, "1 new of 2")) << both.out;
  const auto listed = tipbench_cmd(dir, {"history", "--store", store, "runs"});
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_TRUE(contains(listed.out, "cpu-test-2c_torch2.11.0")) << listed.out;
  // --store belongs to `history`, and is taken after the subcommand too.
  const auto after = tipbench_cmd(dir, {"history", "runs", "--store", store});
  EXPECT_EQ(after.code, 0) << after.err;
  EXPECT_EQ(after.out, listed.out);

  // A bad file anywhere in the list: exit 2 naming it, nothing stored.
  const auto c = (dir / "c.json").string(), broken = (dir / "broken.json").string();
  tipbench::write_result_atomically(synthetic_run({.seed = 3}), c);
  std::ofstream(broken) << "{ not json";
  const auto refused = tipbench_cmd(dir, {"history", "--store", store, "ingest", c, broken});
  EXPECT_EQ(refused.code, 2);
  EXPECT_TRUE(contains(refused.err, "broken.json")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "nothing was ingested")) << refused.err;
  EXPECT_FALSE(contains(tipbench_cmd(dir, {"history", "--store", store, "runs"}).out, "  3  "));

  // A store that is not one; a missing one to list.
  const auto notes = (dir / "notes.txt").string();
  std::ofstream(notes) << "notes\n";
  const auto foreign = tipbench_cmd(dir, {"history", "--store", notes, "ingest", a});
  EXPECT_EQ(foreign.code, 2);
  EXPECT_TRUE(contains(foreign.err, "not a tipbench history store")) << foreign.err;
  EXPECT_EQ(std::count(foreign.err.begin(), foreign.err.end(), '\n'), 1) << foreign.err;
  const auto missing = tipbench_cmd(dir, {"history", "--store", (dir / "none.db").string(), "runs"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_FALSE(fs::exists(dir / "none.db"));
}

TEST(HistoryCli, IngestsIntoAPostgresServerWithThePasswordMasked) {
  using tipbench::testing::PostgresServer;
  const auto dir = fresh_scratch_dir("history_cli_postgres");
  const auto url = PostgresServer::instance().fresh_database("cli");
  const auto a = (dir / "a.json").string(), b = (dir / "b.json").string();
  tipbench::write_result_atomically(synthetic_run({.seed = 1}), a);
  tipbench::write_result_atomically(synthetic_run({.seed = 2}), b);
  // A reader on an empty database: no store there (a mistyped database is not an empty history),
  // and nothing made in it.
  for (const char* read : {"runs", "detect", "annotations"}) {
    const auto none = tipbench_cmd(dir, {"history", "--store", url, read});
    EXPECT_EQ(none.code, 2) << read << ": " << none.out << none.err;
    EXPECT_TRUE(contains(none.err, "no tipbench history store in this database")) << none.err;
  }
  const auto first = tipbench_cmd(dir, {"history", "--store", url, "ingest", a, b});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(contains(first.out, "stored as run 1")) << first.out;
  EXPECT_TRUE(contains(first.out, "2 new of 2 in postgresql://tipbench:***@")) << first.out;
  const auto again = tipbench_cmd(dir, {"history", "--store", url, "ingest", a});
  EXPECT_TRUE(contains(again.out, "already stored")) << again.out;
  const auto listed = tipbench::testing::run_child({TIPBENCH_BINARY, "history", "runs"}, dir / "runs.out",
                                                   dir / "runs.err", {{"TIPBENCH_HISTORY_STORE", url}});
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_EQ(std::count(listed.out.begin(), listed.out.end(), '\n'), 2) << listed.out;
  for (const auto& text : {first.out, first.err, again.out, listed.out, listed.err}) {
    EXPECT_FALSE(contains(text, PostgresServer::kPassword)) << text;
  }

  // A wrong password, a closed port: exit 2, one line, the password never shown.
  const auto port = std::to_string(PostgresServer::instance().port());
  const auto wrong = tipbench_cmd(
      dir, {"history", "--store", "postgresql://tipbench:wrong-pw@127.0.0.1:" + port + "/postgres", "runs"});
  EXPECT_EQ(wrong.code, 2) << wrong.out << wrong.err;
  EXPECT_TRUE(contains(wrong.err, "***")) << wrong.err;
  EXPECT_FALSE(contains(wrong.err, "wrong-pw")) << wrong.err;
  EXPECT_EQ(std::count(wrong.err.begin(), wrong.err.end(), '\n'), 1) << wrong.err;
  const auto closed =
      tipbench_cmd(dir, {"history", "--store", "postgresql://tipbench@127.0.0.1:1/x?connect_timeout=5", "runs"});
  EXPECT_EQ(closed.code, 2) << closed.err;
  EXPECT_TRUE(contains(closed.err, "cannot connect")) << closed.err;
}

// Twelve nightly runs ingested by the CLI: runs 9-12 (ids) 20% slower. Returns ingest's exit code.
int ingest_twelve_nights(const fs::path& dir, const std::string& store) {
  std::vector<std::string> ingest{"history", "--store", store, "ingest"};
  for (int i = 0; i < 12; ++i) {
    const auto file = (dir / ("run" + std::to_string(i) + ".json")).string();
    tipbench::write_result_atomically(synthetic_run({.factor = i >= 8 ? 0.8 : 1.0,
                                                     .seed = static_cast<std::uint64_t>(i),
                                                     .timestamp = "2026-11-" + std::to_string(10 + i) + "T03:00:00Z"}),
                                      file);
    ingest.push_back(file);
  }
  return tipbench_cmd(dir, ingest).code;
}

TEST(HistoryCli, DetectExitsOneOnANewRegressionAndWritesItsReports) {
  const auto dir = fresh_scratch_dir("history_cli_detect");
  const auto store = (dir / "history.db").string();
  ASSERT_EQ(ingest_twelve_nights(dir, store), 0);
  const auto json = (dir / "detect.json").string(), md = (dir / "detect.md").string();
  const auto found = tipbench_cmd(
      dir, {"history", "--store", store, "detect", "--series", "throughput", "--json", json, "--markdown", md});
  EXPECT_EQ(found.code, 1) << found.out << found.err;
  EXPECT_TRUE(contains(found.out, "REGRESSION   zero_grad/model:m0/batch:8/arm:base throughput_samples_per_s"))
      << found.out;
  EXPECT_TRUE(contains(found.out, "2 new regression(s)")) << found.out;
  EXPECT_TRUE(fs::exists(json));
  EXPECT_TRUE(fs::exists(md));
  const auto recorded =
      tipbench_cmd(dir, {"history", "--store", store, "detect", "--series", "throughput", "--record"});
  EXPECT_EQ(recorded.code, 1) << recorded.err;
  EXPECT_TRUE(contains(recorded.out, "recorded 2 change point(s) of 2 stored series")) << recorded.out;
  {
    tipbench::history::HistoryStore kept(store);
    const auto points = kept.change_points();
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].run_id, 9);  // the first slower run (ids follow the ingest order)
    EXPECT_EQ(points[0].verdict, "REGRESSION");
    EXPECT_NEAR(points[0].ratio, 0.8, 0.02);
  }
  const auto old_news = tipbench_cmd(dir, {"history", "--store", store, "detect", "--since", "2026-11-30"});
  EXPECT_EQ(old_news.code, 0) << old_news.out << old_news.err;
  EXPECT_TRUE(contains(old_news.out, "0 new regression(s)")) << old_news.out;

  // Bad input: exit 2, one line, before any work.
  const auto missing = tipbench_cmd(dir, {"history", "--store", (dir / "none.db").string(), "detect"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.err, "no history store there")) << missing.err;
  const auto bad_out = tipbench_cmd(dir, {"history", "--store", store, "detect", "--json", "/proc/x/y.json"});
  EXPECT_EQ(bad_out.code, 2) << bad_out.err;
  const auto bad_p = tipbench_cmd(dir, {"history", "--store", store, "detect", "--p-value", "nan"});
  EXPECT_EQ(bad_p.code, 2) << bad_p.err;
  // A --since that is no UTC time would make no change new: the CI step could never fail.
  for (const char* since : {"garbage", "2026-13-01", "2026-11-31T25:00:00Z", "yesterday", "2026/11/20"}) {
    const auto bad_since = tipbench_cmd(dir, {"history", "--store", store, "detect", "--since", since});
    EXPECT_EQ(bad_since.code, 2) << since << ": " << bad_since.out << bad_since.err;
    EXPECT_TRUE(contains(bad_since.err, "--since")) << bad_since.err;
  }
  EXPECT_EQ(tipbench_cmd(dir, {"history", "--store", store, "detect", "--since", "2026-11-30T03:00:00Z"}).code, 0);
}

TEST(HistoryCli, AnnotateTurnsARegressionIntoAnExpectedChangeAndRefusesBadInput) {
  const auto dir = fresh_scratch_dir("history_cli_annotate");
  const auto store = (dir / "history.db").string();
  ASSERT_EQ(ingest_twelve_nights(dir, store), 0);
  const std::vector<std::string> detect{"history", "--store", store, "detect", "--series", "throughput"};
  EXPECT_EQ(tipbench_cmd(dir, detect).code, 1);

  const auto expected = tipbench_cmd(dir, {"history", "--store", store, "annotate", "--expected-change", "9",
                                           "--series", "arm:base throughput", "--note", "new allocator, accepted"});
  ASSERT_EQ(expected.code, 0) << expected.err;
  EXPECT_TRUE(contains(expected.out, "expected change at run 9, 1 series")) << expected.out;
  const auto half = tipbench_cmd(dir, detect);
  EXPECT_EQ(half.code, 1) << half.out;  // the treat arm's series is still a new regression
  EXPECT_TRUE(contains(half.out, "expected     zero_grad/model:m0/batch:8/arm:base")) << half.out;
  EXPECT_TRUE(contains(half.out, "1 new regression(s)")) << half.out;
  const auto all = tipbench_cmd(
      dir, {"history", "--store", store, "annotate", "--expected-change", "9", "--note", "new allocator, accepted"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(tipbench_cmd(dir, detect).code, 0);
  const auto listed = tipbench_cmd(dir, {"history", "--store", store, "annotations"});
  EXPECT_EQ(listed.code, 0);
  EXPECT_TRUE(contains(listed.out, "expected_change  run 9 (2026-11-18T03:00:00Z)  all series")) << listed.out;
  EXPECT_EQ(tipbench_cmd(dir, {"history", "--store", store, "annotate", "--remove", "2"}).code, 0);
  EXPECT_EQ(tipbench_cmd(dir, detect).code, 1);

  // Bad input: exit 2, one line.
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--exclude-run", "3"},                                           // no note
           {"--exclude-run", "99", "--note", "x"},                           // no such run
           {"--exclude-run", "3", "--expected-change", "4", "--note", "x"},  // two actions
           {"--exclude-run", "3", "--series", "base", "--note", "x"},        // --series without --expected-change
           {"--expected-change", "3", "--series", "nothing-like-it", "--note", "x"},
           {"--remove", "77"}}) {
    std::vector<std::string> args{"history", "--store", store, "annotate"};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = tipbench_cmd(dir, args);
    EXPECT_EQ(r.code, 2) << bad[0] << " " << bad[1] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
