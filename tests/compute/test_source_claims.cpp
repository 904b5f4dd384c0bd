// Every tip measured from the source articles states what they claim for it (../shared/TIPS.md),
// so the reports set the measurement beside the promise; only the tips beyond the sources (TF32,
// CUDA graphs: today's standard practice) have none.
#include "suite_plan.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

namespace {

TEST(SourceClaims, EverySuiteFromTheSourcesNamesThemAndTheirClaim) {
  const std::set<std::string> beyond_the_sources{"tf32", "cuda_graphs"};
  // The sources are numbered 000-004: "002", "000-004", "000, 002-004".
  const std::regex sources(R"(00[0-4](-00[0-4])?(, 00[0-4](-00[0-4])?)*)");
  const auto suites = tipbench::all_suites();
  ASSERT_GE(suites.size(), 25u);
  for (const auto* s : suites) {
    SCOPED_TRACE(s->name());
    const auto claim = s->source_claim();
    if (beyond_the_sources.contains(s->name())) {
      EXPECT_FALSE(claim.has_value());
      continue;
    }
    ASSERT_TRUE(claim.has_value());
    EXPECT_TRUE(std::regex_match(claim->sources, sources)) << claim->sources;
    EXPECT_GE(claim->claim.size(), 10u) << claim->claim;
  }
}

}  // namespace
