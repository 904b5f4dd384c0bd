// The ops a .pt2 graph may call (models/src/allowed_ops.h): ATen's compute ops, every composite
// on the list a real ATen op, the ops that reach outside their tensors refused by name, other
// namespaces refused unless the user names them (--allow-op).
#include "allowed_ops.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>

namespace {

namespace tm_ = tipbench::models;

std::optional<c10::OperatorHandle> find(const std::string& name, const std::string& overload = "") {
  return c10::Dispatcher::singleton().findOp({name, overload});
}

TEST(AllowedOps, EveryListedCompositeIsAnAtenOpOfThisLibTorch) {
  std::set<std::string> aten;
  for (const auto& op : c10::Dispatcher::singleton().getAllOpNames()) aten.insert(op.name);
  for (const auto& name : tm_::composite_compute_ops()) EXPECT_TRUE(aten.count("aten::" + name)) << name;
}

TEST(AllowedOps, TheTrainingIrOfTheReferenceModelsIsAllowed) {
  const std::vector<std::pair<std::string, std::string>> ops = {
      {"aten::conv2d", ""},      {"aten::batch_norm", ""}, {"aten::relu_", ""},
      {"aten::add_", "Tensor"},  {"aten::add", "Tensor"},  {"aten::linear", ""},
      {"aten::layer_norm", ""},  {"aten::gelu", ""},       {"aten::scaled_dot_product_attention", ""},
      {"aten::sym_size", "int"}, {"aten::dropout", ""},    {"aten::mean", "dim"},
      {"aten::cat", ""},         {"aten::expand", ""}};
  for (const auto& [name, overload] : ops) {
    const auto op = find(name, overload);
    ASSERT_TRUE(op.has_value()) << name;
    EXPECT_EQ(tm_::op_refusal(*op, {}), "") << name << "." << overload;
  }
}

TEST(AllowedOps, OpsReachingOutsideTheirTensorsAreRefusedByName) {
  for (const char* name : {"aten::from_file", "aten::_print"}) {
    const auto why = tm_::op_refusal(c10::OperatorName(name, ""), {});
    EXPECT_NE(why.find(std::string("it calls ") + name), std::string::npos) << why;
    EXPECT_NE(why.find("--allow-op " + std::string(name)), std::string::npos) << why;
  }
  // An ATen op neither core nor on the list: refused, named.
  const auto clear_cache = find("aten::_cufft_clear_plan_cache");
  ASSERT_TRUE(clear_cache.has_value());
  EXPECT_NE(tm_::op_refusal(*clear_cache, {}).find("not on tipbench's list"), std::string::npos);
}

TEST(AllowedOps, OtherNamespacesOnlyWhenTheUserNamesThem) {
  const c10::OperatorName allreduce("c10d::allreduce_", "");
  EXPECT_NE(tm_::op_refusal(allreduce, {}).find("outside ATen's compute ops"), std::string::npos);
  EXPECT_NE(tm_::op_refusal(allreduce, {"c10d::broadcast_"}), "");
  EXPECT_EQ(tm_::op_refusal(allreduce, {"c10d::allreduce_"}), "");
  EXPECT_EQ(tm_::op_refusal(allreduce, {"c10d::*"}), "");
  EXPECT_EQ(tm_::op_refusal(c10::OperatorName("aten::from_file", ""), {"aten::from_file"}), "");
}

TEST(AllowedOps, AllowOpEntriesAreNamespaceAndOp) {
  for (const char* ok : {"mylib::fused_gelu", "mylib::*", "_c10d_functional::all_reduce"})
    EXPECT_TRUE(tm_::is_op_pattern(ok)) << ok;
  for (const char* bad : {"", "mylib", "mylib::", "::op", "my lib::op", "mylib::op\n", "*::*", "a::b::c"})
    EXPECT_FALSE(tm_::is_op_pattern(bad)) << bad;
}

}  // namespace
