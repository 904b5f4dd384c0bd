// A user's model file (models/model_file.h): loaded, checked, registered as a model, trained like
// a reference model; every bad file refused with its reason; torchvision's ResNet-18 scripted is
// our resnet18 (the fidelity check of docs/own-model.md). The files come from
// tests/models/make_model_files.py (tests/support/model_files.h).
#include "tipbench/models/model.h"
#include "tipbench/models/model_file.h"

#include "model_files.h"
#include "text_match.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace {

namespace fs = std::filesystem;
namespace tm_ = tipbench::models;
using tipbench::testing::contains;
using tipbench::testing::model_files;

class ModelFile : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(model_files().error.empty()) << model_files().error; }
  static std::string path(const std::string& name) { return model_files().path(name); }
  static const tm_::ModelFile& tiny() { return tm_::use_model_file({.path = path("tiny.pt")}); }
};

// The message of the ModelFileError that using `request` throws ("" when it does not throw).
std::string refusal(const tm_::ModelFileRequest& request) {
  try {
    (void)tm_::inspect_model_file(request);
  } catch (const tm_::ModelFileError& e) {
    return e.what();
  }
  return "";
}

std::map<std::string, torch::Tensor> tensors_by_name(const torch::nn::Module& m) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value();
  for (const auto& b : m.named_buffers()) out[b.key()] = b.value();
  return out;
}

TEST_F(ModelFile, RegistersAModelWithTheFilesShapeAndIdentity) {
  const auto& f = tiny();
  EXPECT_EQ(f.name, "tiny_net");
  EXPECT_EQ(f.input, (std::vector<std::int64_t>{3, 32, 32}));
  EXPECT_EQ(f.classes, 10);
  EXPECT_EQ(f.how, "script");
  EXPECT_EQ(f.sha256.size(), 64u);
  EXPECT_EQ(tm_::model_file("tiny_net"), &f);
  EXPECT_EQ(tm_::model_file("resnet18"), nullptr);
  EXPECT_EQ(tm_::resolved_image_size("tiny_net", {}), 32);
  EXPECT_EQ(tm_::resolved_num_classes("tiny_net", {}), 10);
  const auto& models = tm_::available_models();
  const auto it = std::find_if(models.begin(), models.end(), [](const auto& m) { return m.name == "tiny_net"; });
  ASSERT_NE(it, models.end());
  EXPECT_EQ(it->family, "file");
  // The same file again is the same registration; a model file cannot be resized or edited.
  EXPECT_EQ(&tm_::use_model_file({.path = path("tiny.pt")}), &f);
  EXPECT_THROW(tm_::make_model("tiny_net", {.image_size = 64}), std::invalid_argument);
  EXPECT_THROW(tm_::make_model("tiny_net", {.conv_bias_before_bn = true}), std::invalid_argument);
}

TEST_F(ModelFile, TrainsThroughTheScriptsOwnTensors) {
  const auto& f = tiny();
  auto model = tm_::make_model(f.name);
  auto& module = *model.ptr();
  EXPECT_EQ(tm_::count_parameters(module), f.parameters);
  for (const auto& p : module.parameters()) EXPECT_TRUE(p.requires_grad());
  const auto before = tensors_by_name(module);
  ASSERT_TRUE(before.contains("bn/running_mean")) << "buffers are registered by their dotted names, '/' for '.'";
  const auto mean_before = before.at("bn/running_mean").clone();
  const auto weight_before = before.at("conv/weight").clone();

  torch::manual_seed(0);
  const auto x = torch::randn({4, 3, 32, 32});
  const auto labels = torch::randint(10, {4}, torch::kLong);
  torch::optim::SGD sgd(module.parameters(), torch::optim::SGDOptions(0.1));
  module.train();
  torch::nn::functional::cross_entropy(model.forward(x), labels).backward();
  sgd.step();
  // The optimizer moved the script's weight, and BatchNorm in train mode updated its statistics.
  EXPECT_FALSE(torch::equal(before.at("conv/weight"), weight_before));
  EXPECT_FALSE(torch::equal(before.at("bn/running_mean"), mean_before));

  module.eval();  // the script's training flag follows: statistics frozen, dropout off
  const auto frozen = before.at("bn/running_mean").clone();
  const auto y1 = model.forward(x), y2 = model.forward(x);
  EXPECT_TRUE(torch::equal(before.at("bn/running_mean"), frozen));
  EXPECT_TRUE(torch::equal(y1, y2));
}

TEST_F(ModelFile, CloneIsAFreshScriptWithTheSameValues) {
  auto model = tm_::make_model(tiny().name);
  model.ptr()->eval();
  const auto x = torch::randn({2, 3, 32, 32});
  const auto copy = model.ptr()->clone();
  const auto mine = tensors_by_name(*model.ptr()), theirs = tensors_by_name(*copy);
  ASSERT_EQ(mine.size(), theirs.size());
  for (const auto& [name, t] : mine) {
    EXPECT_TRUE(torch::equal(t, theirs.at(name))) << name;
    EXPECT_NE(t.data_ptr(), theirs.at(name).data_ptr()) << name << " shares memory with the clone";
  }
  // Changing the original leaves the clone as it was.
  torch::NoGradGuard no_grad;
  mine.at("fc/weight").add_(1.0);
  EXPECT_FALSE(torch::equal(mine.at("fc/weight"), theirs.at("fc/weight")));
}

TEST_F(ModelFile, ChannelsLastConvertsTheScriptsWeightsInPlace) {
  auto model = tm_::make_model(tiny().name);
  model.ptr()->eval();
  torch::manual_seed(1);
  const auto x = torch::randn({2, 3, 32, 32});
  torch::NoGradGuard no_grad;
  const auto nchw = model.forward(x);
  tm_::to_channels_last(*model.ptr());
  const auto weight = tensors_by_name(*model.ptr()).at("conv/weight");
  EXPECT_TRUE(weight.is_contiguous(at::MemoryFormat::ChannelsLast));
  const auto nhwc = model.forward(x.contiguous(at::MemoryFormat::ChannelsLast));
  // The same 27-term dot products summed in another order: float32 rounding of a few ulps.
  EXPECT_TRUE(torch::allclose(nhwc, nchw, /*rtol=*/1e-4, /*atol=*/1e-5));
}

TEST_F(ModelFile, RefusesEveryBadFileWithItsReason) {
  EXPECT_TRUE(contains(refusal({.path = path("not_torchscript.pt")}), "not a TorchScript model"));
  EXPECT_TRUE(contains(refusal({.path = path("newer_torch.pt")}), "maximum supported version"));
  EXPECT_TRUE(contains(refusal({.path = path("custom_op.pt")}), "Unknown builtin op: tipbench_test::twice"));
  EXPECT_TRUE(contains(refusal({.path = path("traced.pt")}), "--allow-trace"));
  EXPECT_EQ(refusal({.path = path("traced.pt"), .allow_trace = true}), "");
  EXPECT_TRUE(contains(refusal({.path = path("no_metadata.pt")}), "--model-input C,H,W and --model-classes K"));
  EXPECT_TRUE(contains(refusal({.path = path("wrong_width.pt")}), "want logits [2,10]"));
  EXPECT_TRUE(contains(refusal({.path = path("int_logits.pt")}), "want floating point"));
  EXPECT_TRUE(contains(refusal({.path = path("grayscale.pt")}), "square 3-channel images"));
  EXPECT_TRUE(contains(refusal({.path = path("tiny.pt"), .classes = 7}), "disagrees with the file's 10"));
  EXPECT_TRUE(contains(refusal({.path = path("missing.pt")}), "cannot be read"));
  EXPECT_TRUE(contains(refusal({.path = model_files().dir.string()}), "a folder"));
  // A file named like a built-in model (the name comes from its stem without metadata).
  const fs::path named = model_files().dir / "named_as_builtin";
  fs::create_directories(named);
  fs::copy_file(path("no_metadata.pt"), named / "resnet18.pt", fs::copy_options::overwrite_existing);
  EXPECT_TRUE(contains(refusal({.path = (named / "resnet18.pt").string(), .input = {3, 32, 32}, .classes = 10}),
                       "taken by a built-in model"));
}

TEST_F(ModelFile, WithoutMetadataTakesTheShapeFromTheRequest) {
  const auto f = tm_::inspect_model_file({.path = path("no_metadata.pt"), .input = {3, 32, 32}, .classes = 10});
  EXPECT_EQ(f.name, "no_metadata");
  EXPECT_EQ(f.how, "unknown");
  EXPECT_EQ(f.metadata, "");
}

TEST_F(ModelFile, RecordsTheTorchScriptExecutorSettings) {
  const auto settings = tm_::script_executor_settings();
  for (const char* key :
       {"graph_optimize", "profiling_executor", "profiled_runs", "tensorexpr_fuser", "fuse_on_cpu", "fuse_on_gpu"}) {
    EXPECT_TRUE(settings.contains(key)) << key;
  }
  tm_::set_script_optimization(false);
  EXPECT_EQ(tm_::script_executor_settings().at("graph_optimize"), "false");
  tm_::set_script_optimization(true);
  EXPECT_EQ(tm_::script_executor_settings().at("graph_optimize"), "true");
}

// Fidelity: torchvision's ResNet-18, scripted by export_model.py, has our resnet18's parameters by
// name and shape, and with the file's weights copied in our model computes the file's logits.
TEST_F(ModelFile, TorchvisionResnet18IsOurResnet18) {
  if (!fs::exists(path("tv_resnet18.pt"))) GTEST_SKIP() << "torchvision is not importable by TIPBENCH_PYTHON";
  const auto& f = tm_::use_model_file({.path = path("tv_resnet18.pt")});
  auto file_model = tm_::make_model(f.name);
  auto ours = tm_::make_model("resnet18");
  EXPECT_EQ(tm_::count_parameters(*file_model.ptr()), tm_::count_parameters(*ours.ptr()));
  EXPECT_EQ(f.parameters, 11'689'512);
  auto theirs = tensors_by_name(*file_model.ptr());
  {
    torch::NoGradGuard no_grad;
    for (auto& [name, t] : tensors_by_name(*ours.ptr())) {
      std::string key = name;
      std::replace(key.begin(), key.end(), '.', '/');
      ASSERT_TRUE(theirs.contains(key)) << name;
      ASSERT_EQ(theirs.at(key).sizes(), t.sizes()) << name;
      t.copy_(theirs.at(key));
    }
  }
  file_model.ptr()->eval();
  ours.ptr()->eval();
  torch::manual_seed(2);
  const auto x = torch::randn({2, 3, 224, 224});
  torch::NoGradGuard no_grad;
  const auto a = file_model.forward(x), b = ours.forward(x);
  // The same ATen kernels on the same weights; a graph executor may reorder float32 sums (BatchNorm
  // folded into the convolution's epilogue): a few ulps, amplified through 18 layers.
  EXPECT_TRUE(torch::allclose(a, b, /*rtol=*/1e-3, /*atol=*/1e-4)) << (a - b).abs().max().item<float>();
}

}  // namespace
