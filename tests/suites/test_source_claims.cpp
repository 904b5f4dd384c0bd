// Every tip measured from the source articles states what they claim for it (docs/sources.md),
// so the reports set the measurement beside the promise; only the tips beyond the sources (TF32,
// CUDA graphs, torch.compile: today's standard practice) and the recipe of several tips have none. docs/sources.md is
// the key to the codes.
#include "suite_plan.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

// docs/sources.md's "Per tip" rows: suite name -> its sources column ("000, 002-004").
std::map<std::string, std::string> documented_citations() {
  std::ifstream in(std::string(TIPBENCH_SOURCE_DIR) + "/docs/sources.md");
  std::map<std::string, std::string> out;
  const std::regex row(R"(^\| `([a-z_0-9]+)` \| ([0-9, -]+) \| .+\|$)");
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, row)) out[m[1]] = m[2];
  }
  return out;
}

TEST(SourceClaims, EverySuiteFromTheSourcesNamesThemAndTheirClaim) {
  // recipe: the tips combined (tipbench advise), a question the sources leave open.
  const std::set<std::string> beyond_the_sources{"tf32", "cuda_graphs", "recipe", "compile"};
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

TEST(SourceClaims, DocsSourcesListsEveryCitationAsTheSuiteMakesIt) {
  const auto documented = documented_citations();
  ASSERT_FALSE(documented.empty()) << "no rows read from docs/sources.md";
  std::set<std::string> cited;
  for (const auto* s : tipbench::all_suites()) {
    const auto claim = s->source_claim();
    if (!claim) continue;
    SCOPED_TRACE(s->name());
    cited.insert(s->name());
    ASSERT_TRUE(documented.contains(s->name())) << "docs/sources.md has no row for it";
    EXPECT_EQ(documented.at(s->name()), claim->sources);
  }
  for (const auto& [name, _] : documented) EXPECT_TRUE(cited.contains(name)) << name << " is no citing suite";
}

}  // namespace
