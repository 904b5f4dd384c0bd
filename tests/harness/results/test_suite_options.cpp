// Suite-declared options (harness/results/include/tipbench/results/suite_options.h): a value falls back to the
// declaration's default, numbers and choices are checked with messages a user can act on.
#include "tipbench/common/real_number.h"
#include "tipbench/results/suite_options.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using tipbench::OptionType;
using tipbench::SuiteOption;

const SuiteOption kBucket{.name = "bucket-mb",
                          .type = OptionType::number,
                          .default_value = "25",
                          .help = "bucket size",
                          .min = 0.001,
                          .max = 4096};
const SuiteOption kPolicy{.name = "corrupt-policy",
                          .type = OptionType::choice,
                          .default_value = "skip",
                          .help = "policy",
                          .choices = {"skip", "fail"}};
const SuiteOption kOnly{.name = "loader-only", .type = OptionType::flag, .default_value = "false", .help = "only"};
const SuiteOption kData{.name = "data", .type = OptionType::text, .default_value = "", .help = "dir"};

TEST(SuiteOptions, AnUnsetOptionReadsAsItsDefault) {
  const tipbench::SuiteOptionValues none;
  EXPECT_EQ(kBucket.number(none), 25.0);
  EXPECT_EQ(kPolicy.text(none), "skip");
  EXPECT_FALSE(kOnly.flag(none));
  EXPECT_EQ(kData.text(none), "");
}

TEST(SuiteOptions, ASetOptionReadsAsGiven) {
  const tipbench::SuiteOptionValues given{
      {"bucket-mb", "0.5"}, {"corrupt-policy", "fail"}, {"loader-only", "true"}, {"data", "/d"}};
  EXPECT_EQ(kBucket.number(given), 0.5);
  EXPECT_EQ(kPolicy.text(given), "fail");
  EXPECT_TRUE(kOnly.flag(given));
  EXPECT_EQ(kData.text(given), "/d");
}

TEST(SuiteOptions, BadValuesNameTheFlagAndWhatIsAccepted) {
  EXPECT_EQ(kBucket.problem("25"), "");
  EXPECT_EQ(kBucket.problem("4096"), "");
  EXPECT_EQ(kBucket.problem("0"), "--bucket-mb: 0 is outside [0.001, 4096]");
  // One rule with the CLI's own numbers (parse_real): decimal and finite, no nan, inf or hex.
  EXPECT_EQ(kBucket.problem("nan"), "--bucket-mb: 'nan' is not a number (decimal and finite)");
  EXPECT_EQ(kBucket.problem("inf"), "--bucket-mb: 'inf' is not a number (decimal and finite)");
  EXPECT_EQ(kBucket.problem("0x10"), "--bucket-mb: '0x10' is not a number (decimal and finite)");
  EXPECT_EQ(kBucket.problem("1e400"), "--bucket-mb: '1e400' is not a number (decimal and finite)");
  EXPECT_EQ(kBucket.problem("12MB"), "--bucket-mb: '12MB' is not a number (decimal and finite)");
  EXPECT_EQ(kBucket.problem(""), "--bucket-mb: '' is not a number (decimal and finite)");
  EXPECT_EQ(kPolicy.problem("fail"), "");
  EXPECT_EQ(kPolicy.problem("ignore"), "--corrupt-policy: 'ignore' is not one of skip, fail");
  EXPECT_EQ(kData.problem("anything"), "");
  EXPECT_THROW(kBucket.number({{"bucket-mb", "lots"}}), std::invalid_argument);
  EXPECT_THROW(kOnly.flag({{"loader-only", "yes"}}), std::invalid_argument);
}

TEST(SuiteOptions, TypesHaveNames) {
  EXPECT_EQ(tipbench::to_string(OptionType::flag), "flag");
  EXPECT_EQ(tipbench::to_string(OptionType::text), "text");
  EXPECT_EQ(tipbench::to_string(OptionType::number), "number");
  EXPECT_EQ(tipbench::to_string(OptionType::choice), "choice");
}

// The CLI's one reading of a number (every floating-point flag and number option): decimal and
// finite. NaN would pass any range check (it compares false), infinity and hex are not what a
// threshold or a bucket size means.
TEST(RealNumbers, DecimalAndFiniteOnly) {
  for (const auto& [text, value] : std::vector<std::pair<std::string, double>>{
           {"2", 2}, {"-0.5", -0.5}, {"1e-3", 1e-3}, {".5", 0.5}, {"+3", 3}, {"25.", 25}, {"1E2", 100}}) {
    ASSERT_TRUE(tipbench::parse_real(text)) << text;
    EXPECT_EQ(*tipbench::parse_real(text), value) << text;
  }
  for (const std::string text :
       {"nan",  "NaN", "-nan", "inf", "-inf", "infinity", "1e400", "-1e999", "0x10",  "0x1p3",
        "2.5%", "",    " 1",   "1 ",  "e5",   "1e",       ".",     "-",      "1.2.3", "1e5.0"}) {
    EXPECT_FALSE(tipbench::parse_real(text)) << "'" << text << "'";
  }
  const tipbench::SuiteOption mb{.name = "bucket-mb",
                                 .type = tipbench::OptionType::number,
                                 .default_value = "25",
                                 .help = "",
                                 .min = 0.001,
                                 .max = 4096};
  EXPECT_NE(mb.problem("nan").find("not a number"), std::string::npos) << mb.problem("nan");
  EXPECT_NE(mb.problem("0x10").find("not a number"), std::string::npos);
  EXPECT_EQ(mb.problem("0.5"), "");
  EXPECT_EQ(mb.number({{"bucket-mb", "0.5"}}), 0.5);
}

}  // namespace
