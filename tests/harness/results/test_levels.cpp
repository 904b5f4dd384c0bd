// Levels: names joined in order, a missing key named with those present, and numbers read by one
// rule (the whole value, decimal, finite), which every suite uses for its batch, world size,
// threads and megabytes. Core only.
#include "tipbench/results/levels.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using tipbench::Levels;

TEST(Levels, JoinKeepsTheOrder) {
  EXPECT_EQ(tipbench::join_levels({{"model", "resnet50"}, {"batch", "64"}}), "model:resnet50/batch:64");
}

TEST(Levels, AMissingKeyNamesTheKeysPresent) {
  try {
    tipbench::level({{"model", "resnet50"}}, "batch");
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("'batch'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model:resnet50"), std::string::npos) << e.what();
  }
}

TEST(Levels, WholeNumbersAreRead) {
  const Levels p{{"batch", "64"}, {"world_size", "-2"}, {"big", "9007199254740993"}};
  EXPECT_EQ(tipbench::level_int(p, "batch"), 64);
  EXPECT_EQ(tipbench::level_int(p, "world_size"), -2);
  EXPECT_EQ(tipbench::level_int(p, "big"), 9007199254740993);  // past a double's 2^53: exact
}

TEST(Levels, NumbersAreRead) {
  const Levels p{{"bucket_mb", "0.5"}, {"threshold", "25"}, {"lr", "1e-05"}};
  EXPECT_DOUBLE_EQ(tipbench::level_number(p, "bucket_mb"), 0.5);
  EXPECT_DOUBLE_EQ(tipbench::level_number(p, "threshold"), 25.0);
  EXPECT_DOUBLE_EQ(tipbench::level_number(p, "lr"), 1e-05);  // as fmt's {:g} writes a small lr
}

TEST(Levels, AValueThatIsNotWhollyANumberIsRefusedNamingKeyAndValue) {
  for (const std::string bad : {"", "64x", " 64", "6.4", "0x40", "1e3", "largest", "99999999999999999999"}) {
    try {
      tipbench::level_int({{"batch", bad}}, "batch");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("level 'batch' is '" + bad + "'"), std::string::npos) << e.what();
    }
  }
  for (const std::string bad : {"", "0.5MB", "nan", "inf", "1e999", "0x1p3"}) {
    EXPECT_THROW(tipbench::level_number({{"mb", bad}}, "mb"), std::invalid_argument) << "'" << bad << "'";
  }
}

}  // namespace
