// The device_creation suite (suites/device_creation.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "common/training.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(DeviceCreationSuite, SkippedOnCpuWhereTheHostIsTheDevice) {
  const auto& s = suite_named("device_creation");
  const auto context = cpu_context(true);
  const auto c = s.cases(context)[0];
  EXPECT_EQ(arm_names(c), (std::vector<std::string>{"host", "device"}));
  const auto why = s.skip_reason(context, c, c.arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "the host is the device")) << *why;
  auto workload = s.prepare(context, c, c.arms[0], {});  // the workload itself runs anywhere
  workload->step();
  EXPECT_EQ(workload->info().at("step_tensors"), "host");
}

}  // namespace
