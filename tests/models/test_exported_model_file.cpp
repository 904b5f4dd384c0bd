// A user's model as a torch.export archive (.pt2, models/src/exported_program.h): its train and
// eval programs run through the dispatcher compute eager PyTorch's logits and gradients (float64,
// against tests/models/make_model_files.py's references), the batch size stays dynamic, clones and
// channels_last act on the programs' tensors, and every archive it cannot train is refused with
// the reason.
#include "tipbench/models/model.h"
#include "tipbench/models/model_file.h"
#include "tipbench/models/state_dict.h"

#include "model_files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

namespace {

namespace fs = std::filesystem;
namespace tm_ = tipbench::models;
using tipbench::testing::model_files;

class ExportedModelFile : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(model_files().error.empty()) << model_files().error; }
  static std::string path(const std::string& name) { return model_files().path(name); }
};

std::map<std::string, torch::Tensor> reference(const std::string& file) {
  std::map<std::string, torch::Tensor> out;
  for (auto& [name, t] : tm_::load_tensors(file)) out[name] = t;
  return out;
}

std::string refusal(const std::string& file) {
  try {
    (void)tm_::inspect_model_file({.path = file});
  } catch (const tm_::ModelFileError& e) {
    return e.what();
  }
  return "";
}

// The largest difference between `a` and `b` relative to b's scale: float64 sums of the same terms
// in another order (another CPU's vector width) differ by a few ulps of the largest term.
double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(b.abs().max().item<double>(), 1e-300);
}

// The file's model in float64: eval logits of the fresh model, then one training step (dropout
// after manual_seed(123)), each against the eager reference.
void expect_eager_numbers(const std::string& file, const std::string& reference_file) {
  const auto& f = tm_::use_model_file({.path = file});
  EXPECT_EQ(f.format, "pt2");
  EXPECT_EQ(f.how, "export");
  auto model = tm_::make_model(f.name);
  model.ptr()->to(torch::kDouble);
  auto ref = reference(reference_file);
  constexpr double kUlps = 1e-12;  // float64 epsilon 2.2e-16 times the depth of the longest sums
  {
    torch::NoGradGuard no_grad;
    model.ptr()->eval();
    EXPECT_LT(relative_difference(model.forward(ref.at("input")), ref.at("eval_logits")), kUlps);
  }
  model.ptr()->train();
  torch::manual_seed(123);
  const auto logits = model.forward(ref.at("input"));
  EXPECT_LT(relative_difference(logits, ref.at("logits")), kUlps);
  torch::nn::functional::cross_entropy(logits, ref.at("labels")).backward();
  int grads = 0;
  for (const auto& p : model.ptr()->named_parameters()) {
    std::string name = p.key();
    std::replace(name.begin(), name.end(), '/', '.');
    ASSERT_TRUE(p.value().grad().defined()) << name;
    EXPECT_LT(relative_difference(p.value().grad(), ref.at("grad." + name)), kUlps) << name;
    ++grads;
  }
  EXPECT_GT(grads, 0);
}

TEST_F(ExportedModelFile, LogitsAndGradientsAreEagersInFloat64) {
  expect_eager_numbers(path("tiny.pt2"), path("tiny_pt2_ref.pt"));
}

// torchvision's ViT: the dynamic batch in size arithmetic (sym_size, _operator.mul, view), attention.
TEST_F(ExportedModelFile, VitsSizeArithmeticAndAttentionAreEagers) {
  if (!fs::exists(path("vit.pt2"))) GTEST_SKIP() << "torchvision is not importable by TIPBENCH_PYTHON";
  expect_eager_numbers(path("vit.pt2"), path("vit_ref.pt"));
}

// The batch size is dynamic; height and width too where the model allows it (TinyNet averages
// over them), else the archive refuses other sizes (torchvision's ViT checks its image size).
TEST_F(ExportedModelFile, RecordsTheProgramsAndRunsTheSizesTheExportAllows) {
  const auto& f = tm_::use_model_file({.path = path("tiny.pt2")});
  EXPECT_EQ(f.name, "tiny_pt2");
  EXPECT_EQ(f.input, (std::vector<std::int64_t>{3, 32, 32}));
  EXPECT_EQ(f.parameters, 322);
  EXPECT_EQ(f.program.at("schema_version").substr(0, 2), "8.");
  EXPECT_GT(std::stoi(f.program.at("train_ops")), std::stoi(f.program.at("eval_ops")));  // + num_batches_tracked
  auto model = tm_::make_model(f.name);
  model.ptr()->train();
  for (int batch : {2, 5, 64}) EXPECT_EQ(model.forward(torch::randn({batch, 3, 32, 32})).size(0), batch);
  EXPECT_EQ(model.forward(torch::randn({2, 3, 16, 24})).sizes(), (std::vector<std::int64_t>{2, 10}));
  if (!fs::exists(path("vit.pt2"))) GTEST_SKIP() << "torchvision is not importable by TIPBENCH_PYTHON";
  auto vit = tm_::make_model(tm_::use_model_file({.path = path("vit.pt2")}).name);
  try {
    (void)vit.forward(torch::randn({2, 3, 16, 16}));
    ADD_FAILURE() << "an image of another size ran";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("takes images [1..,3,32,32], not [2,3,16,16]"), std::string::npos) << e.what();
  }
}

// Train mode updates BatchNorm's running statistics, eval mode reads them only: two programs.
TEST_F(ExportedModelFile, EvalRunsTheEvalProgram) {
  auto model = tm_::make_model(tm_::use_model_file({.path = path("tiny.pt2")}).name);
  auto running_mean = [&] { return model.ptr()->named_buffers()["bn/running_mean"].clone(); };
  const auto before = running_mean();
  model.ptr()->eval();
  (void)model.forward(torch::randn({4, 3, 32, 32}));
  EXPECT_TRUE(torch::equal(running_mean(), before));
  model.ptr()->train();
  (void)model.forward(torch::randn({4, 3, 32, 32}));
  EXPECT_FALSE(torch::equal(running_mean(), before));
  EXPECT_EQ(model.ptr()->named_buffers()["bn/num_batches_tracked"].item<std::int64_t>(), 1);
}

TEST_F(ExportedModelFile, ClonesAndChannelsLastActOnTheProgramsTensors) {
  auto model = tm_::make_model(tm_::use_model_file({.path = path("tiny.pt2")}).name);
  auto copy = model.clone();  // DataParallel's replicas
  const auto weight = [](torch::nn::AnyModule& m) { return m.ptr()->named_parameters()["conv/weight"]; };
  EXPECT_TRUE(torch::equal(weight(copy), weight(model)));
  EXPECT_NE(weight(copy).data_ptr(), weight(model).data_ptr());
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model.ptr()->parameters()) {
      if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
  EXPECT_TRUE(weight(model).is_contiguous(torch::MemoryFormat::ChannelsLast));
  model.ptr()->eval();
  copy.ptr()->eval();
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({2, 3, 32, 32});
  const auto a = model.forward(x.contiguous(torch::MemoryFormat::ChannelsLast));
  const auto b = copy.forward(x);
  // The same sums in another memory order: float32 ulps of the logits' scale.
  EXPECT_TRUE(torch::allclose(a, b, /*rtol=*/1e-5, /*atol=*/1e-6)) << (a - b).abs().max().item<float>();
}

TEST_F(ExportedModelFile, RefusesWhatItCannotTrainWithTheReason) {
  const std::map<std::string, std::string> expected = {
      {"one_program.pt2", "holds no 'train' program (it holds model.json)"},
      {"newer_schema.pt2", "serialization schema 99.0; this tipbench reads schema 8.x"},
      {"custom_op.pt2", "it calls tipbench_test::twice, an op outside ATen's compute ops"},
      {"from_file.pt2", "it calls aten::from_file, which reaches outside its tensors"},
      {"far_offset.pt2",
       "its tensor 'conv.weight': it claims 216 elements reaching element 1215, but its record holds "
       "216"},
      {"huge_tensor.pt2", "its tensor 'conv.weight': it claims 2147483648 elements"},
  };
  for (const auto& [file, reason] : expected) {
    const std::string why = refusal(path(file));
    EXPECT_NE(why.find(path(file) + ": not a torch.export program tipbench can train: "), std::string::npos) << why;
    EXPECT_NE(why.find(reason), std::string::npos) << file << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

// The security review's trigger: a graph mapping a file (aten::from_file, shared) and filling it.
// Refused while the graph is read, so the load check's forward never runs and the file is as it was.
TEST_F(ExportedModelFile, AModelFileWritesNoFile) {
  const std::string victim = path("victim.txt");
  for (int i = 0; i < 2; ++i) {
    try {
      if (i == 0) (void)tm_::inspect_model_file({.path = path("from_file.pt2")});
      if (i == 1) (void)tm_::use_model_file({.path = path("from_file.pt2")});
      ADD_FAILURE() << "from_file.pt2 was accepted";
    } catch (const tm_::ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find("aten::from_file"), std::string::npos) << e.what();
    }
  }
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "untouched\n");
}

// --allow-op lets a trusted file name an op beyond the list; a custom op still needs its library.
TEST_F(ExportedModelFile, AllowOpLetsTheUserNameAnOp) {
  try {
    (void)tm_::inspect_model_file({.path = path("custom_op.pt2"), .allow_ops = {"tipbench_test::*"}});
    ADD_FAILURE() << "custom_op.pt2 was accepted without its op library";
  } catch (const tm_::ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("it calls tipbench_test::twice, an op this process lacks"), std::string::npos)
        << e.what();
  }
}

}  // namespace
