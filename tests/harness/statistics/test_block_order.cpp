// The block order is a fixed function of the run seed, the case's name and the block: pinned here,
// so a change of standard library or of the code that would reorder a run's trials is caught.
#include "tipbench/statistics/block_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using Order = std::vector<int>;

TEST(BlockOrder, Fnv1aMatchesThePublishedTestVectors) {
  EXPECT_EQ(tipbench::fnv1a_64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(tipbench::fnv1a_64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(tipbench::fnv1a_64("foobar"), 0x85944171f73967e8ULL);
}

TEST(BlockOrder, IsPinnedForAKnownSeedAndCase) {
  const std::string name = "zero_grad/model:small_cnn/batch:32";
  EXPECT_EQ(tipbench::block_order({0, 1, 2, 3, 4}, 0, name, 0), (Order{4, 3, 2, 1, 0}));
  EXPECT_EQ(tipbench::block_order({0, 1, 2, 3, 4}, 0, name, 1), (Order{2, 1, 4, 0, 3}));
  EXPECT_EQ(tipbench::block_order({0, 1, 2, 3, 4}, 0, name, 2), (Order{1, 4, 3, 0, 2}));
  EXPECT_EQ(tipbench::block_order({0, 1, 2, 3, 4}, 42, name, 0), (Order{2, 4, 0, 3, 1}));
  EXPECT_EQ(tipbench::block_order({0, 1, 2, 3, 4}, 0, "zero_grad/model:resnet50/batch:64", 0), (Order{3, 0, 1, 4, 2}));
}

TEST(BlockOrder, TheSeedsHighBitsCount) {
  const std::string name = "zero_grad/model:small_cnn/batch:32";
  EXPECT_EQ(tipbench::block_order({0, 1, 2, 3, 4}, 1ULL << 40, name, 0), (Order{1, 2, 0, 3, 4}));
  EXPECT_NE(tipbench::block_order({0, 1, 2, 3, 4}, 1ULL << 40, name, 0),
            tipbench::block_order({0, 1, 2, 3, 4}, 0, name, 0));
}

TEST(BlockOrder, IsAPermutationOfTheArmsGiven) {
  const Order runnable{0, 2, 5};  // skipped arms are not in it
  for (int block = 0; block < 20; ++block) {
    auto order = tipbench::block_order(runnable, 7, "c", block);
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, runnable);
  }
  EXPECT_TRUE(tipbench::block_order({}, 7, "c", 0).empty());
}

}  // namespace
