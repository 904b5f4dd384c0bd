// Sequential blocks (block_looks.h): where a case looks, at what confidence, and the stop reasons
// an interval gives against the precision and the practical band.
#include "tipbench/statistics/block_looks.h"
#include "tipbench/statistics/settings.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace {

using tipbench::MeasureSettings;
using tipbench::StopReason;

TEST(BlockLooks, DefaultsLookAtFiveEightThirteenAndTwenty) {
  const MeasureSettings s;
  EXPECT_EQ(tipbench::block_looks(s), (std::vector<int>{5, 8, 13, 20}));
  EXPECT_FALSE(tipbench::fixed_blocks(s));
  EXPECT_DOUBLE_EQ(tipbench::look_confidence(s), 1 - 0.05 / 4);
}

TEST(BlockLooks, AFixedCountOrAProfiledRunLooksOnceAtNinetyFivePercent) {
  MeasureSettings fixed = tipbench::quick_settings();
  EXPECT_EQ(tipbench::block_looks(fixed), (std::vector<int>{6}));
  EXPECT_DOUBLE_EQ(tipbench::look_confidence(fixed), 0.95);
  MeasureSettings profiled;
  profiled.profile_dir = "traces";  // its traces are taken after the last planned block
  EXPECT_EQ(tipbench::block_looks(profiled), (std::vector<int>{20}));
  MeasureSettings capped;
  capped.blocks = 7;
  EXPECT_EQ(tipbench::block_looks(capped), (std::vector<int>{5, 7}));
}

tipbench::stats::RatioEstimate interval(double ratio, double low, double high) {
  return {.ratio = ratio, .ci_low = low, .ci_high = high, .blocks = 5};
}

TEST(StopReason, OutsideInsidePreciseOrUnresolved) {
  const MeasureSettings s;  // band 2%, precision 0.5%
  EXPECT_EQ(tipbench::stop_reason(interval(1.10, 1.05, 1.15), s), StopReason::settled_outside);
  EXPECT_EQ(tipbench::stop_reason(interval(0.90, 0.85, 0.95), s), StopReason::settled_outside);
  EXPECT_EQ(tipbench::stop_reason(interval(1.00, 0.99, 1.015), s), StopReason::settled_inside);
  // Straddles the band's edge, but only 0.4% wide each side: precise.
  EXPECT_EQ(tipbench::stop_reason(interval(1.02, 1.016, 1.024), s), StopReason::precise);
  EXPECT_EQ(tipbench::stop_reason(interval(1.02, 1.00, 1.04), s), StopReason::unresolved);
  EXPECT_EQ(tipbench::stop_reason(interval(1.02, 1.00, 1.04), tipbench::quick_settings()), StopReason::fixed);
}

TEST(StopReason, NamesRoundTripAndUnknownOnesAreRefused) {
  for (auto r : {StopReason::fixed, StopReason::settled_outside, StopReason::settled_inside, StopReason::precise,
                 StopReason::unresolved}) {
    EXPECT_EQ(tipbench::stop_reason_from_string(tipbench::to_string(r)), r);
  }
  EXPECT_THROW(tipbench::stop_reason_from_string("done"), std::invalid_argument);
}

TEST(BlocksToResolve, MoreNoiseNeedsMoreBlocksAndTheEdgeNeedsThePrecision) {
  const MeasureSettings s;
  const auto at_edge = interval(1.02, 1.00, 1.04);
  const std::size_t quiet = tipbench::blocks_to_resolve(at_edge, 0.01, s);
  const std::size_t loud = tipbench::blocks_to_resolve(at_edge, 0.03, s);
  EXPECT_GT(loud, quiet);
  // On the edge the interval must shrink to the precision: t * 0.01 / sqrt(n) <= log(1.005).
  EXPECT_GE(quiet, 20u);
  // Far from the edge a wide interval already settles it.
  EXPECT_LT(tipbench::blocks_to_resolve(interval(1.10, 1.0, 1.2), 0.03, s), quiet);
}

}  // namespace
