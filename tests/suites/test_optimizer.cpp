// The optimizer suite (suites/optimizer.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "child_process.h"
#include "cuda_required.h"
#include "common/optimizers.h"
#include "common/training.h"
#include "suite_plan.h"
#include "test_paths.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(OptimizerSuite, QuickStepsTheOptimizerAloneAndTrainsSgdFullAlsoTrainsAdamW) {
  const auto& s = suite_named("optimizer");
  const auto quick = s.cases(cpu_context(true));
  ASSERT_EQ(quick.size(), 3u);
  EXPECT_EQ(tipbench::case_name("optimizer", quick[0]), "optimizer/model:small_cnn/batch:32/optimizer:sgd/scope:step");
  EXPECT_EQ(tipbench::case_name("optimizer", quick[1]), "optimizer/model:small_cnn/optimizer:sgd/scope:optimizer");
  EXPECT_EQ(tipbench::case_name("optimizer", quick[2]), "optimizer/model:small_cnn/optimizer:adamw/scope:optimizer");
  EXPECT_EQ(arm_names(quick[1]), (std::vector<std::string>{"loop", "foreach", "fused"}));
  const auto full = s.cases(cpu_context(false));
  ASSERT_EQ(full.size(), 4u);
  EXPECT_EQ(tipbench::case_name("optimizer", full[0]), "optimizer/model:small_cnn/batch:32/optimizer:sgd/scope:step");
  EXPECT_EQ(tipbench::case_name("optimizer", full[1]), "optimizer/model:resnet50/optimizer:sgd/scope:optimizer");
  for (const auto& arm : quick[1].arms) {
    if (auto why = s.skip_reason(cpu_context(true), quick[1], arm)) {
      EXPECT_TRUE(contains(*why, "fused")) << *why;
      continue;
    }
    auto alone = s.prepare(cpu_context(true), quick[1], arm, {});
    alone->step();
    EXPECT_EQ(alone->info().at("optimizer_impl"), arm.name);
    EXPECT_EQ(alone->samples_per_step(), 1);  // throughput = optimizer steps/s
  }
  auto training = s.prepare(cpu_context(false), full[0], full[0].arms[1], {});
  training->step();
  EXPECT_EQ(training->info().at("optimizer_impl"), "foreach");
  // The baseline is Python's default on the CPU, the loop; every training arm names both.
  auto baseline = s.prepare(cpu_context(false), full[0], full[0].arms[0], {});
  EXPECT_EQ(full[0].arms[0].name, "loop");
  EXPECT_EQ(baseline->info().at("optimizer_impl"), "loop");
  EXPECT_EQ(baseline->info().at("pytorch_default_optimizer_impl"), "loop");
}

// The rule of pytorch_default_impl against what Python's torch.optim.SGD and AdamW step with when
// neither foreach nor fused is given: on every device this machine has (the CPU; CUDA where there
// is one), and the device types PyTorch lists as having foreach kernels. Returns the devices asked.
std::vector<std::string> expect_the_rule_pythons_torch_optim_follows() {
  namespace s = tipbench::suites;
  const auto dir = tipbench::testing::fresh_scratch_dir("optimizer_default");
  const auto ran = tipbench::testing::run_child(
      {TIPBENCH_PYTHON, std::string(TIPBENCH_SOURCE_DIR) + "/tests/suites/pytorch_optimizer_choice.py",
       (dir / "choice.json").string()},
      dir / "out.txt", dir / "err.txt");
  EXPECT_EQ(ran.code, 0) << ran.err;
  if (ran.code != 0) return {};
  const auto python = nlohmann::json::parse(tipbench::testing::read_bytes(dir / "choice.json"));
  std::vector<std::string> devices;
  for (const auto& [device, by_kind] : python.at("devices").items()) {
    devices.push_back(device);
    const auto type = c10::Device(device).type();
    for (const auto& [kind, impl] : by_kind.items()) {
      EXPECT_EQ(s::optimizer_impl_name(s::pytorch_default_impl(type)), impl.get<std::string>())
          << kind << " on " << device;
    }
  }
  const auto listed = python.at("foreach_devices").get<std::vector<std::string>>();
  for (const auto type :
       {c10::DeviceType::CPU, c10::DeviceType::CUDA, c10::DeviceType::MPS, c10::DeviceType::XPU, c10::DeviceType::MTIA,
        c10::DeviceType::HPU, c10::DeviceType::Meta, c10::DeviceType::PrivateUse1}) {
    const std::string name = c10::DeviceTypeName(type, /*lower_case=*/true);
    const bool foreach = std::find(listed.begin(), listed.end(), name) != listed.end();
    EXPECT_EQ(s::pytorch_default_impl(type), foreach ? s::OptimizerImpl::foreach : s::OptimizerImpl::loop) << name;
  }
  return devices;
}

TEST(OptimizerDefault, IsTheImplementationPythonsTorchOptimStepsWith) {
  const auto devices = expect_the_rule_pythons_torch_optim_follows();
  EXPECT_NE(std::find(devices.begin(), devices.end(), "cpu"), devices.end());
}

// The same on a GPU machine, where Python's SGD and AdamW step CUDA parameters with foreach.
TEST(OptimizerDefault_CUDA, IsTheImplementationPythonsTorchOptimStepsWithOnCuda) {
  TIPBENCH_REQUIRE_CUDA();
  const auto devices = expect_the_rule_pythons_torch_optim_follows();
  EXPECT_NE(std::find(devices.begin(), devices.end(), "cuda"), devices.end()) << "the Python has no CUDA";
}

// On CUDA the optimizer suite's baseline is foreach, Python's default there.
TEST(OptimizerSuite, TheBaselineIsPythonsDefaultForTheDevice) {
  const auto& s = suite_named("optimizer");
  for (const auto& c : s.cases(tipbench::testing::cuda_context())) {
    EXPECT_EQ(arm_names(c), (std::vector<std::string>{"foreach", "loop", "fused"}))
        << tipbench::case_name("optimizer", c);
  }
}

}  // namespace
