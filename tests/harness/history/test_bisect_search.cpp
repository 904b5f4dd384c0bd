// history::bisect (harness/history/include/tipbench/history/bisect.h) without git or builds: a
// culprit at every place of lines of every length is found in about log2(n) + 1 measures, each
// commit measured at most once; a bad end that measures the same, or that cannot be decided, is
// not searched; a commit that cannot be decided stops the search with the bounds it had.
#include "tipbench/history/bisect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace {

namespace h = tipbench::history;
using h::BisectSearch;
using h::BuildSameness;

TEST(BisectSearch, FindsEveryCulpritInAboutLog2Measures) {
  for (std::size_t n = 1; n <= 40; ++n) {
    for (std::size_t culprit = 0; culprit < n; ++culprit) {
      std::set<std::size_t> seen;
      const auto s = h::bisect(n, [&](std::size_t i) {
        EXPECT_TRUE(seen.insert(i).second) << "commit " << i << " measured twice";
        return i >= culprit ? BuildSameness::different : BuildSameness::same;
      });
      ASSERT_EQ(s.outcome, BisectSearch::Outcome::found) << n << " " << culprit;
      EXPECT_EQ(s.first_bad, culprit) << n;
      EXPECT_EQ(s.last_good, static_cast<std::ptrdiff_t>(culprit) - 1) << n;
      EXPECT_LE(s.measured, static_cast<std::size_t>(std::ceil(std::log2(n))) + 1) << n << " " << culprit;
      EXPECT_EQ(s.measured, seen.size());
    }
  }
}

TEST(BisectSearch, ABadEndThatMeasuresTheSameOrUndecidedIsNotSearched) {
  const auto same = h::bisect(8, [](std::size_t) { return BuildSameness::same; });
  EXPECT_EQ(same.outcome, BisectSearch::Outcome::not_reproduced);
  EXPECT_EQ(same.measured, 1u);
  const auto undecided = h::bisect(8, [](std::size_t) { return BuildSameness::undecided; });
  EXPECT_EQ(undecided.outcome, BisectSearch::Outcome::ends_undecided);
  EXPECT_EQ(undecided.measured, 1u);
}

TEST(BisectSearch, AnUndecidedCommitStopsTheSearchWithItsBounds) {
  // Culprit 5 of 16; commit 3 cannot be told apart.
  const auto s = h::bisect(16, [](std::size_t i) {
    if (i == 3) return BuildSameness::undecided;
    return i >= 5 ? BuildSameness::different : BuildSameness::same;
  });
  ASSERT_EQ(s.outcome, BisectSearch::Outcome::stopped);
  EXPECT_EQ(s.undecided, 3u);
  EXPECT_LT(s.last_good, 3);
  EXPECT_GE(s.first_bad, 5u);
  EXPECT_THROW(h::bisect(0, [](std::size_t) { return BuildSameness::same; }), std::invalid_argument);
}

}  // namespace
