// `tipbench history detect --confirm` and `history bisect` as a user runs them: a real git
// repository of five commits, one build per commit (the real binary; from the third commit on, a
// wrapper whose runs are half as fast: --inject-slowdown 100), a store whose series halves between
// the first and the last commit. The builds really run, interleaved, and the gate judges them. The
// steps are large because quick CPU trials (0.25 s when measured, 0.15 s since) on a shared 2-core
// machine vary by 10-15% from block to block: an A/A comparison must still rule out the threshold
// (half the change).
#include "tipbench/results/result.h"

#include "child_process.h"
#include "postgres_server.h"
#include "scratch_dir.h"
#include "synthetic.h"
#include "test_paths.h"
#include "text_match.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using tipbench::testing::contains;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::run_child;
using tipbench::testing::synthetic_run;

struct Project {
  fs::path dir, repo;
  std::string store;                 // a SQLite file or a postgresql:// URL
  std::vector<std::string> commits;  // oldest first
};

std::vector<std::string> git_commits(const fs::path& dir, const fs::path& repo, int n) {
  const auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {"/usr/bin/env", "git", "-C", repo.string(), "-c", "user.name=t", "-c", "user.email=t@t"});
    const auto r = run_child(args, dir / "git.out", dir / "git.err");
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  };
  fs::create_directories(repo);
  git({"init", "-q"});
  for (int i = 0; i < n; ++i) git({"commit", "-q", "--allow-empty", "-m", "commit " + std::to_string(i)});
  std::vector<std::string> commits;
  std::istringstream lines(git({"rev-list", "--reverse", "HEAD"}));
  for (std::string line; std::getline(lines, line);) commits.push_back(line);
  return commits;
}

// The gate's bound on the share of the CPUs other processes may take for two runs to count as
// measured under the same conditions (ci/gate-thresholds.json, foreign_cpu_pct).
constexpr double kQuietBound = 0.20;

// The largest share of the CPUs other processes took during any interleaved run a confirmation
// kept in `work` (each side's merged result records its conditions).
double largest_foreign_cpu(const fs::path& work) {
  double largest = 0;
  if (!fs::exists(work)) return largest;
  for (const auto& entry : fs::recursive_directory_iterator(work)) {
    const auto name = entry.path().filename().string();
    if (name != "base.json" && name != "head.json") continue;
    const auto conditions = tipbench::read_result(entry.path().string()).context.conditions;
    if (conditions.is_object() && conditions.contains("foreign_cpu") && conditions["foreign_cpu"].is_number()) {
      largest = std::max(largest, conditions["foreign_cpu"].get<double>());
    }
  }
  return largest;
}

// An executable script at `path` that runs the real binary, its runs slowed by `slowdown_pct`.
void write_build(const fs::path& path, int slowdown_pct) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\n"
                      << (slowdown_pct > 0 ? "if [ \"$1\" = run ]; then exec " + std::string(TIPBENCH_BINARY) +
                                                 " \"$@\" --inject-slowdown " + std::to_string(slowdown_pct) + "; fi\n"
                                           : "")
                      << "exec " << TIPBENCH_BINARY << " \"$@\"\n";
  ::chmod(path.c_str(), 0755);
}

// Eight runs at the first commit, four half as fast at the last, of zero_grad on small_cnn (a case
// the builds can re-run); builds/<sha>/tipbench slow from commit 2 on.
Project project(const std::string& name, const std::string& store = "") {
  Project p;
  p.dir = fresh_scratch_dir(name);
  p.repo = p.dir / "repo";
  p.store = store.empty() ? (p.dir / "history.db").string() : store;
  p.commits = git_commits(p.dir, p.repo, 5);
  for (std::size_t i = 0; i < p.commits.size(); ++i) {
    write_build(p.dir / "builds" / p.commits[i] / "tipbench", i >= 2 ? 100 : 0);
  }
  std::vector<std::string> ingest{TIPBENCH_BINARY, "history", "--store", p.store, "ingest"};
  for (int i = 0; i < 12; ++i) {
    const auto file = (p.dir / ("run" + std::to_string(i) + ".json")).string();
    tipbench::write_result_atomically(synthetic_run({.model = "small_cnn",
                                                     .batch = 32,
                                                     .arms = {"none", "zero"},
                                                     .git_sha = i < 8 ? p.commits.front() : p.commits.back(),
                                                     .factor = i < 8 ? 1.0 : 0.5,
                                                     .seed = static_cast<std::uint64_t>(i),
                                                     .timestamp = "2026-11-" + std::to_string(10 + i) + "T03:00:00Z"}),
                                      file);
    ingest.push_back(file);
  }
  const auto stored = run_child(ingest, p.dir / "ingest.out", p.dir / "ingest.err");
  EXPECT_EQ(stored.code, 0) << stored.err;
  return p;
}

tipbench::testing::ChildOutcome history(const Project& p, std::vector<std::string> args) {
  args.insert(args.begin(), {TIPBENCH_BINARY, "history", "--store", p.store});
  return run_child(args, p.dir / "stdout.txt", p.dir / "stderr.txt");
}

TEST(HistoryBisect, NamesTheFirstCommitWhoseBuildIsSlower) {
  const auto p = project("history_bisect");
  const auto json = (p.dir / "bisect.json").string();
  const auto found = history(p, {"bisect", "--series", "arm:zero throughput", "--repo", p.repo.string(), "--binaries",
                                 (p.dir / "builds" / "{commit}" / "tipbench").string(), "--blocks", "4", "--max-blocks",
                                 "16", "--out-dir", (p.dir / "work").string(), "--json", json});
  ASSERT_EQ(found.code, 1) << found.out << found.err;
  EXPECT_TRUE(contains(found.out, "first commit with the regression: " + p.commits[2] + " commit 2")) << found.out;
  EXPECT_TRUE(contains(found.out, "4 commit(s) after")) << found.out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["first_bad"], p.commits[2]);
  ASSERT_EQ(j["steps"].size(), 3u) << j.dump(2);  // the bad end, then two halvings of four commits
  EXPECT_EQ(j["steps"][0]["verdict"], "DIFFERENT");
  EXPECT_LT(j["steps"][0]["ratio"].get<double>(), 0.75);
  EXPECT_EQ(j["steps"][2]["commit"], p.commits[1]);
  EXPECT_EQ(j["steps"][2]["verdict"], "SAME");

  // Bad input: one line, exit 2, nothing measured.
  const auto two_series = history(p, {"bisect", "--series", "throughput", "--repo", p.repo.string(), "--binaries",
                                      (p.dir / "builds" / "{commit}" / "tipbench").string()});
  EXPECT_EQ(two_series.code, 2) << two_series.out << two_series.err;
  EXPECT_TRUE(contains(two_series.err, "2 series have a regression")) << two_series.err;
  const auto no_placeholder = history(p, {"bisect", "--series", "arm:zero throughput", "--repo", p.repo.string(),
                                          "--binaries", (p.dir / "builds" / "tipbench").string()});
  EXPECT_EQ(no_placeholder.code, 2) << no_placeholder.err;
  EXPECT_TRUE(contains(no_placeholder.err, "has no {commit}")) << no_placeholder.err;
  const auto bad_good = history(p, {"bisect", "--series", "arm:zero throughput", "--repo", p.repo.string(), "--good",
                                    "nonsense", "--binaries", (p.dir / "builds" / "{commit}" / "tipbench").string()});
  EXPECT_EQ(bad_good.code, 2) << bad_good.err;
  EXPECT_TRUE(contains(bad_good.err, "'nonsense' is not a commit of")) << bad_good.err;
  const auto not_a_repo = history(p, {"bisect", "--series", "arm:zero throughput", "--repo", p.dir.string() + "/none",
                                      "--binaries", (p.dir / "builds" / "{commit}" / "tipbench").string()});
  EXPECT_EQ(not_a_repo.code, 2) << not_a_repo.err;
  EXPECT_EQ(std::count(not_a_repo.err.begin(), not_a_repo.err.end(), '\n'), 1) << not_a_repo.err;
}

TEST(HistoryBisect, ConfirmTellsAReproducedRegressionFromOneTheBuildsDoNotShow) {
  const auto p = project("history_confirm");
  const auto slow = history(p, {"detect", "--series", "arm:zero throughput", "--confirm", "--binaries",
                                (p.dir / "builds" / "{commit}" / "tipbench").string(), "--blocks", "4", "--max-blocks",
                                "16", "--out-dir", (p.dir / "work-slow").string()});
  EXPECT_EQ(slow.code, 1) << slow.out << slow.err;
  EXPECT_TRUE(contains(slow.out, "DIFFERENT")) << slow.out;
  EXPECT_TRUE(contains(slow.out, "1 confirmed, 0 not reproduced")) << slow.out;

  // Builds that measure the same (made by --build, as a user's build script would): not reproduced.
  const auto same =
      history(p, {"detect", "--series", "arm:zero throughput", "--confirm", "--binaries",
                  (p.dir / "same" / "{commit}" / "tipbench").string(), "--build",
                  "cp " + (p.dir / "builds" / p.commits[0] / "tipbench").string() + " \"$TIPBENCH_BINARY\"", "--blocks",
                  "4", "--max-blocks", "16", "--out-dir", (p.dir / "work-same").string()});
  // SAME needs a quiet machine: when other processes took more of the CPUs than the gate's bound,
  // an A/A comparison may be too noisy for a verdict, and RUN MORE (exit 3) is then the right
  // answer (never DIFFERENT). The rest of the test still runs; it ends skipped, saying why.
  const double loaded = largest_foreign_cpu(p.dir / "work-same");
  const bool too_loaded = same.code == 3 && loaded > kQuietBound;
  EXPECT_FALSE(contains(same.out, "DIFFERENT")) << same.out;
  if (!too_loaded) {
    EXPECT_EQ(same.code, 0) << same.out << same.err;
    EXPECT_TRUE(contains(same.out, "SAME")) << same.out;
    EXPECT_TRUE(contains(same.out, "0 confirmed, 1 not reproduced")) << same.out;
  }
  EXPECT_TRUE(fs::exists(p.dir / "same" / p.commits.back() / "tipbench"));

  // A build command that fails: exit 4 naming its log; a missing binary without one: exit 2.
  const auto broken = history(p, {"detect", "--series", "arm:zero throughput", "--confirm", "--binaries",
                                  (p.dir / "broken" / "{commit}" / "tipbench").string(), "--build", "exit 3",
                                  "--out-dir", (p.dir / "work-broken").string()});
  EXPECT_EQ(broken.code, 4) << broken.out << broken.err;
  EXPECT_TRUE(contains(broken.err, "build-")) << broken.err;
  const auto missing = history(p, {"detect", "--series", "arm:zero throughput", "--confirm", "--binaries",
                                   (p.dir / "none" / "{commit}" / "tipbench").string()});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_TRUE(contains(missing.err, "no executable for commit")) << missing.err;
  const auto without_confirm = history(p, {"detect", "--blocks", "3"});
  EXPECT_EQ(without_confirm.code, 2) << without_confirm.err;
  EXPECT_TRUE(contains(without_confirm.err, "--blocks goes with --confirm")) << without_confirm.err;
  if (too_loaded) {
    GTEST_SKIP() << "the A/A confirmation said RUN MORE with other processes on " << loaded * 100
                 << "% of the CPUs (over the " << kQuietBound * 100 << "% bound): SAME needs a quiet machine";
  }
}

// The same confirmation over a fleet's PostgreSQL store (the throw-away test server).
TEST(HistoryBisect, ConfirmReadsAPostgresStoreToo) {
  const auto p =
      project("history_confirm_postgres", tipbench::testing::PostgresServer::instance().fresh_database("confirm"));
  const auto slow = history(p, {"detect", "--series", "arm:zero throughput", "--confirm", "--binaries",
                                (p.dir / "builds" / "{commit}" / "tipbench").string(), "--blocks", "4", "--max-blocks",
                                "16", "--out-dir", (p.dir / "work").string()});
  EXPECT_EQ(slow.code, 1) << slow.out << slow.err;
  EXPECT_TRUE(contains(slow.out, "1 confirmed, 0 not reproduced")) << slow.out;
}

}  // namespace
