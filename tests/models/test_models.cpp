// tipbench::models: parameter counts and names, output shapes, options, the state-dict loader,
// and outputs compared with torchvision itself (make_reference.py; skipped without torchvision).
#include <gtest/gtest.h>
#include <torch/nn/parallel/data_parallel.h>
#include <torch/torch.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_required.h"
#include "generated_once.h"
#include "scratch_dir.h"
#include "test_paths.h"
#include "tipbench/models/model.h"
#include "tipbench/models/resnet.h"
#include "tipbench/models/small_cnn.h"
#include "tipbench/models/state_dict.h"
#include "tipbench/models/vit.h"

namespace fs = std::filesystem;
namespace tm_ = tipbench::models;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::remove_tree;
using tipbench::testing::scratch_root;
using tipbench::testing::write_bytes;

namespace {

torch::Tensor forward(torch::nn::AnyModule& model, const torch::Tensor& x) { return model.forward<torch::Tensor>(x); }

int64_t count(const std::string& name, tm_::ModelOptions options = {}) {
  auto model = tm_::make_model(name, options);
  return tm_::count_parameters(*model.ptr());
}

bool has_tensor(const torch::nn::Module& m, const std::string& name) {
  return m.named_parameters().contains(name) || m.named_buffers().contains(name);
}

std::string bytes_of(const std::vector<char>& v) { return {v.begin(), v.end()}; }

// Expects `fn` to throw E whose message contains every one of `needles`.
template <typename E>
void expect_throw_containing(const std::function<void()>& fn, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& n : needles) EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' not in: " << what;
  }
}

// allclose with the tolerance scaled to the output's magnitude.
void expect_close(const torch::Tensor& got, const torch::Tensor& want, double rel = 1e-4) {
  ASSERT_EQ(got.sizes(), want.sizes());
  const double scale = std::max(1.0, want.abs().max().item<double>());
  const double max_diff = (got - want).abs().max().item<double>();
  EXPECT_LE(max_diff, rel * scale) << "max |diff| " << max_diff << " at output scale " << scale;
}

}  // namespace

// ------------------------------------------------------------------------------------- factory
TEST(ModelFactory, ListsEveryModel) {
  std::vector<std::string> names;
  for (const auto& info : tm_::available_models()) names.push_back(info.name);
  EXPECT_EQ(names, (std::vector<std::string>{"resnet18", "resnet34", "resnet50", "vit_ti_16", "vit_s_16", "vit_b_16",
                                             "small_cnn"}));
  for (const auto& info : tm_::available_models()) {
    EXPECT_TRUE(info.family == "cnn" || info.family == "vit") << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_EQ(tm_::resolved_image_size(info.name, {}), info.default_image_size);
  }
  EXPECT_EQ(tm_::resolved_image_size("small_cnn", {}), 32);
  EXPECT_EQ(tm_::resolved_image_size("vit_b_16", {}), 224);
  EXPECT_EQ(tm_::resolved_image_size("vit_b_16", {.image_size = 384}), 384);
}

TEST(ModelFactory, UnknownNameListsValidNames) {
  expect_throw_containing<std::invalid_argument>(
      [] { tm_::make_model("resnet19"); },
      {"unknown model 'resnet19'; valid: resnet18, resnet34, resnet50, vit_ti_16, vit_s_16, vit_b_16, small_cnn"});
  EXPECT_THROW(tm_::resolved_image_size("nope", {}), std::invalid_argument);
}

TEST(ModelFactory, InvalidOptionsThrow) {
  expect_throw_containing<std::invalid_argument>([] { tm_::make_model("vit_ti_16", {.image_size = 100}); },
                                                 {"vit_ti_16", "multiple of the patch size 16", "100"});
  EXPECT_THROW(tm_::resolved_image_size("vit_s_16", {.image_size = 200}), std::invalid_argument);
  EXPECT_THROW(tm_::make_model("resnet18", {.num_classes = -1}), std::invalid_argument);
  EXPECT_THROW(tm_::make_model("small_cnn", {.image_size = -1}), std::invalid_argument);
  EXPECT_THROW(tm_::make_model("vit_ti_16", {.dropout = 1.0}), std::invalid_argument);
}

// ---------------------------------------------------------------------------- parameter counts
TEST(ModelParameters, ResNetCountsMatchTorchvision) {
  EXPECT_EQ(count("resnet18"), 11'689'512);
  EXPECT_EQ(count("resnet34"), 21'797'672);
  EXPECT_EQ(count("resnet50"), 25'557'032);
}

TEST(ModelParameters, ViTCountsMatchTorchvision) {
  // torchvision VisionTransformer(224, 16, 12, heads, hidden, mlp) with the same sizes.
  EXPECT_EQ(count("vit_ti_16"), 5'717'416);
  EXPECT_EQ(count("vit_s_16"), 22'050'664);
  EXPECT_EQ(count("vit_b_16"), 86'567'656);
}

TEST(ModelParameters, SmallCNNIsSmall) {
  const int64_t n = count("small_cnn", {.num_classes = 10});
  // convs 3*32*9 + 32*64*9 + 64*128*9 + 128*256*9, BN 2*(32+64+128+256), fc 256*10+10
  EXPECT_EQ(n, 387'936 + 960 + 2'570);
}

TEST(ModelParameters, ConvBiasBeforeBnAddsExactlyTheConvBiases) {
  // One bias element per conv output channel, downsample convs included (torchvision: sum of
  // Conv2d out_channels). resnet18: 64 + 4*64 + (4*128+128) + (4*256+256) + (4*512+512) = 4800.
  EXPECT_EQ(count("resnet18", {.conv_bias_before_bn = true}) - count("resnet18"), 4'800);
  EXPECT_EQ(count("resnet50", {.conv_bias_before_bn = true}) - count("resnet50"), 26'560);
  EXPECT_EQ(count("small_cnn", {.conv_bias_before_bn = true}) - count("small_cnn"), 32 + 64 + 128 + 256);
  // Every conv of a CNN feeds a BatchNorm, so every one has (or lacks) a bias.
  for (bool bias : {false, true}) {
    for (const char* name : {"resnet18", "resnet50", "small_cnn"}) {
      auto model = tm_::make_model(name, {.conv_bias_before_bn = bias});
      for (const auto& m : model.ptr()->modules()) {
        if (const auto* conv = m->as<torch::nn::Conv2d>()) {
          EXPECT_EQ(conv->bias.defined(), bias) << name;
        }
      }
    }
  }
  // ViT's patch projection keeps its bias either way, as in torchvision.
  EXPECT_EQ(count("vit_ti_16", {.conv_bias_before_bn = true}), count("vit_ti_16"));
}

TEST(ModelParameters, TorchvisionNames) {
  auto r18 = tm_::make_model("resnet18");
  for (const char* name :
       {"conv1.weight", "bn1.weight", "bn1.running_mean", "bn1.running_var", "bn1.num_batches_tracked",
        "layer1.0.conv1.weight", "layer1.1.bn2.bias", "layer2.0.downsample.0.weight",
        "layer2.0.downsample.1.running_var", "layer4.1.conv2.weight", "fc.weight", "fc.bias"}) {
    EXPECT_TRUE(has_tensor(*r18.ptr(), name)) << name;
  }
  EXPECT_FALSE(has_tensor(*r18.ptr(), "layer1.0.downsample.0.weight"));  // no shape change there
  auto r50 = tm_::make_model("resnet50");
  for (const char* name : {"layer1.0.downsample.0.weight", "layer1.0.downsample.1.weight", "layer1.2.conv3.weight",
                           "layer4.2.bn3.running_mean"}) {
    EXPECT_TRUE(has_tensor(*r50.ptr(), name)) << name;
  }
  EXPECT_EQ(r50.ptr()->named_parameters()["layer2.0.conv2.weight"].sizes(), (std::vector<int64_t>{128, 128, 3, 3}));

  auto vit = tm_::make_model("vit_ti_16");
  const std::string l0 = "encoder.layers.encoder_layer_0.";
  for (const std::string& name :
       {std::string("class_token"), std::string("conv_proj.weight"), std::string("conv_proj.bias"),
        std::string("encoder.pos_embedding"), l0 + "ln_1.weight", l0 + "ln_1.bias",
        l0 + "self_attention.in_proj_weight", l0 + "self_attention.in_proj_bias", l0 + "self_attention.out_proj.weight",
        l0 + "self_attention.out_proj.bias", l0 + "ln_2.weight", l0 + "mlp.0.weight", l0 + "mlp.0.bias",
        l0 + "mlp.3.weight", l0 + "mlp.3.bias", std::string("encoder.layers.encoder_layer_11.mlp.3.bias"),
        std::string("encoder.ln.weight"), std::string("heads.head.weight"), std::string("heads.head.bias")}) {
    EXPECT_TRUE(has_tensor(*vit.ptr(), name)) << name;
  }
  const auto params = vit.ptr()->named_parameters();
  EXPECT_EQ(params[l0 + "self_attention.in_proj_weight"].sizes(), (std::vector<int64_t>{576, 192}));
  EXPECT_EQ(params["encoder.pos_embedding"].sizes(), (std::vector<int64_t>{1, 197, 192}));
}

// --------------------------------------------------------------------------------- forward pass
TEST(ModelForward, OutputShapes) {
  torch::NoGradGuard no_grad;
  struct Case {
    std::string name;
    int64_t batch, image_size;
  };
  for (const auto& c : std::vector<Case>{{"resnet18", 2, 64},
                                         {"resnet34", 2, 64},
                                         {"resnet50", 2, 64},
                                         {"vit_ti_16", 2, 32},
                                         {"vit_s_16", 2, 32},
                                         {"vit_b_16", 1, 32},
                                         {"small_cnn", 4, 32}}) {
    auto model = tm_::make_model(c.name, {.num_classes = 7, .image_size = c.image_size});
    model.ptr()->eval();
    auto y = forward(model, torch::randn({c.batch, 3, c.image_size, c.image_size}));
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{c.batch, 7})) << c.name;
    EXPECT_TRUE(torch::isfinite(y).all().item<bool>()) << c.name;
  }
}

TEST(ModelForward, ViTImageSizeSetsPositionEmbedding) {
  auto vit = tm_::make_model("vit_ti_16", {.image_size = 64});
  EXPECT_EQ(vit.ptr()->named_parameters()["encoder.pos_embedding"].sizes(), (std::vector<int64_t>{1, 17, 192}));
  EXPECT_EQ(tm_::count_parameters(*vit.ptr()), 5'717'416 - (197 - 17) * 192);
  vit.ptr()->eval();
  torch::NoGradGuard no_grad;
  EXPECT_EQ(forward(vit, torch::randn({2, 3, 64, 64})).sizes(), (std::vector<int64_t>{2, 1000}));
  EXPECT_THROW(forward(vit, torch::randn({2, 3, 32, 32})), c10::Error);  // wrong input size
}

TEST(ModelForward, StagesComposeToForward) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  tm_::ResNet resnet(tm_::ResNetOptions::resnet18());
  resnet->eval();
  auto x = torch::randn({1, 3, 64, 64});
  auto h = resnet->stem(x);
  ASSERT_EQ(resnet->stages().size(), 4u);
  for (auto& stage : resnet->stages()) h = stage->forward(h);
  EXPECT_TRUE(torch::equal(resnet->head(h), resnet->forward(x)));

  tm_::VisionTransformer vit(
      tm_::ViTOptions{.image_size = 32, .num_layers = 3, .num_heads = 3, .hidden_dim = 48, .mlp_dim = 96});
  vit->eval();
  auto xi = torch::randn({2, 3, 32, 32});
  auto t = vit->embed(xi);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 5, 48}));
  ASSERT_EQ(vit->blocks().size(), 3u);
  for (auto& block : vit->blocks()) t = block->forward(t);
  EXPECT_TRUE(torch::equal(vit->head(t), vit->forward(xi)));

  tm_::SmallCNN cnn;
  EXPECT_EQ(cnn->stages().size(), 4u);
}

TEST(ModelForward, SelfAttentionMatchesExplicitSoftmax) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  tm_::SelfAttention attn(/*embed_dim=*/32, /*num_heads=*/4, /*dropout=*/0.0);
  auto x = torch::randn({2, 5, 32});
  auto qkv = torch::nn::functional::linear(x, attn->in_proj_weight, attn->in_proj_bias).chunk(3, -1);
  auto split = [](const torch::Tensor& t) { return t.view({2, 5, 4, 8}).transpose(1, 2); };
  auto q = split(qkv[0]), k = split(qkv[1]), v = split(qkv[2]);
  auto w = torch::softmax(torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(8.0), -1);
  auto want = attn->out_proj(torch::matmul(w, v).transpose(1, 2).reshape({2, 5, 32}));
  expect_close(attn->forward(x), want, 1e-5);
}

TEST(ModelForward, ChannelsLastMatchesContiguous) {
  for (const std::string& name : std::vector<std::string>{"resnet18", "small_cnn"}) {
    const int64_t size = name == "small_cnn" ? 32 : 64;
    torch::manual_seed(0);
    auto plain = tm_::make_model(name);
    torch::manual_seed(0);
    auto cl = tm_::make_model(name, {.channels_last = true});
    int64_t convs = 0;
    for (const auto& p : cl.ptr()->parameters()) {
      if (p.dim() == 4) {
        ++convs;
        EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast)) << name;
      }
    }
    EXPECT_GT(convs, 0);
    plain.ptr()->eval();
    cl.ptr()->eval();
    torch::NoGradGuard no_grad;
    auto x = torch::randn({2, 3, size, size});
    auto want = forward(plain, x);
    expect_close(forward(cl, x.contiguous(at::MemoryFormat::ChannelsLast)), want);
    expect_close(forward(cl, x), want);
  }
}

TEST(ModelForward, TrainingStepReachesEveryParameter) {
  torch::manual_seed(0);
  auto model = tm_::make_model("small_cnn", {.num_classes = 10});
  model.ptr()->train();
  auto x = torch::randn({32, 3, 32, 32});
  auto target = torch::randint(0, 10, {32});
  auto loss = torch::nn::functional::cross_entropy(forward(model, x), target);
  loss.backward();
  for (const auto& p : model.ptr()->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
  // BN running statistics moved in training mode.
  EXPECT_EQ(model.ptr()->named_buffers()["features.0.bn.num_batches_tracked"].item<int64_t>(), 1);

  // Informational: one SGD step of small_cnn at batch 32 on this machine.
  torch::optim::SGD opt(model.ptr()->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  auto step = [&] {
    opt.zero_grad();
    torch::nn::functional::cross_entropy(forward(model, x), target).backward();
    opt.step();
  };
  for (int i = 0; i < 3; ++i) step();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) step();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 10;
  RecordProperty("small_cnn_step_ms", std::to_string(ms));
  std::printf("small_cnn batch 32 train step: %.2f ms (%d threads)\n", ms, torch::get_num_threads());
}

TEST(ModelForward, CloneIsDeepForDataParallel) {
  torch::manual_seed(0);
  auto model = tm_::make_model("resnet18");
  auto copy = model.ptr()->clone();
  ASSERT_NE(std::dynamic_pointer_cast<tm_::ResNetImpl>(copy), nullptr);
  const auto a = model.ptr()->named_parameters();
  const auto b = copy->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& p : a) {
    EXPECT_TRUE(torch::equal(p.value(), b[p.key()])) << p.key();
    EXPECT_NE(p.value().data_ptr(), b[p.key()].data_ptr()) << p.key();
  }
  EXPECT_EQ(copy->named_buffers().size(), model.ptr()->named_buffers().size());
  auto vit_copy = tm_::make_model("vit_ti_16", {.image_size = 32}).ptr()->clone();
  EXPECT_EQ(tm_::count_parameters(*vit_copy), 5'717'416 - (197 - 5) * 192);
}

TEST(ModelForward, DataParallelOnOneDevice) {
  // data_parallel needs nn::Cloneable modules with forward(Tensor); on one device it runs the
  // module directly, so this pins the API on the CPU (replicas across GPUs need CUDA).
  torch::manual_seed(0);
  tipbench::models::SmallCNN net;
  net->eval();
  torch::NoGradGuard no_grad;
  auto x = torch::randn({4, 3, 32, 32});
  auto y = torch::nn::parallel::data_parallel(net, x, std::vector<torch::Device>{torch::kCPU});
  EXPECT_TRUE(torch::equal(y, net->forward(x)));
}

// ---------------------------------------------------------------------------------- state dict
TEST(StateDict, RoundTripRestoresParametersAndBuffers) {
  const auto path = fresh_scratch_dir("models_state_dict_roundtrip") / "small_cnn.pt";
  torch::manual_seed(1);
  auto a = tm_::make_model("small_cnn");
  forward(a, torch::randn({8, 3, 32, 32}));  // training mode: moves the BN statistics
  tm_::save_state_dict(*a.ptr(), path.string());
  torch::manual_seed(2);
  auto b = tm_::make_model("small_cnn");
  auto report = tm_::load_state_dict(*b.ptr(), path.string());
  EXPECT_TRUE(report.ok()) << report.describe();
  const auto pb = b.ptr()->named_parameters();
  for (const auto& p : a.ptr()->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  const auto bb = b.ptr()->named_buffers();
  for (const auto& t : a.ptr()->named_buffers()) EXPECT_TRUE(torch::equal(t.value(), bb[t.key()])) << t.key();
  EXPECT_EQ(report.loaded.size(), pb.size() + bb.size());
  EXPECT_NE(report.describe().find("ok"), std::string::npos);
}

TEST(StateDict, ReportsMissingUnexpectedAndMismatched) {
  const auto path = fresh_scratch_dir("models_state_dict_report") / "small_cnn_bad.pt";
  torch::manual_seed(1);
  auto source = tm_::make_model("small_cnn");
  c10::Dict<std::string, torch::Tensor> dict;
  for (const auto& p : source.ptr()->named_parameters()) {
    if (p.key() == "fc.bias") continue;  // missing
    dict.insert(p.key(), p.key() == "features.0.conv.weight" ? torch::zeros({32, 3, 5, 5}) : p.value().detach());
  }
  for (const auto& t : source.ptr()->named_buffers()) dict.insert(t.key(), t.value());
  dict.insert("extra.weight", torch::ones({3}));  // unexpected
  const auto bytes = torch::pickle_save(c10::IValue(dict));
  write_bytes(path, bytes_of(bytes));

  torch::manual_seed(2);
  auto target = tm_::make_model("small_cnn");
  const auto before = target.ptr()->named_parameters()["features.1.conv.weight"].clone();
  const std::string mismatch = "features.0.conv.weight: expected [32, 3, 3, 3], got [32, 3, 5, 5]";
  // Strict: throws with every problem listed and leaves the module untouched.
  expect_throw_containing<std::runtime_error>(
      [&] { tm_::load_state_dict(*target.ptr(), path.string()); },
      {path.string(), "1 missing, 1 unexpected, 1 mismatched", "missing: fc.bias", "unexpected: extra.weight",
       "mismatched: " + mismatch});
  EXPECT_TRUE(torch::equal(target.ptr()->named_parameters()["features.1.conv.weight"], before));

  // Not strict: the same report, and everything that matches is loaded.
  auto report = tm_::load_state_dict(*target.ptr(), path.string(), /*strict=*/false);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.missing, std::vector<std::string>{"fc.bias"});
  EXPECT_EQ(report.unexpected, std::vector<std::string>{"extra.weight"});
  EXPECT_EQ(report.mismatched, std::vector<std::string>{mismatch});
  EXPECT_TRUE(torch::equal(target.ptr()->named_parameters()["features.1.conv.weight"],
                           source.ptr()->named_parameters()["features.1.conv.weight"]));
}

TEST(StateDict, UnreadableOrCorruptFileNamesThePath) {
  const auto dir = fresh_scratch_dir("models_state_dict_errors");
  auto model = tm_::make_model("small_cnn");
  auto load = [&](const fs::path& p) { return [&model, p] { tm_::load_state_dict(*model.ptr(), p.string()); }; };

  expect_throw_containing<std::runtime_error>(load(dir / "does_not_exist.pt"), {"does_not_exist.pt", "cannot open"});

  const auto good = dir / "small_cnn_good.pt";
  tm_::save_state_dict(*model.ptr(), good.string());
  const auto bytes = read_bytes(good);
  const auto truncated = dir / "small_cnn_truncated.pt";
  write_bytes(truncated, bytes.substr(0, bytes.size() / 2));
  expect_throw_containing<std::runtime_error>(load(truncated), {truncated.string(), "cannot parse state dict"});

  const auto garbage = dir / "garbage.pt";
  write_bytes(garbage, "this is not a checkpoint");
  expect_throw_containing<std::runtime_error>(load(garbage), {garbage.string(), "cannot parse state dict"});

  const auto tensor_file = dir / "one_tensor.pt";
  const auto tb = torch::pickle_save(c10::IValue(torch::ones({2})));
  write_bytes(tensor_file, bytes_of(tb));
  expect_throw_containing<std::runtime_error>(load(tensor_file), {tensor_file.string(), "not a dict"});
}

// ------------------------------------------------------------------ torchvision as the oracle
namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Runs `make_reference.py args` with TIPBENCH_PYTHON; returns the exit status, output in `log`.
int run_python(const std::string& args, const fs::path& log) {
  const std::string cmd = quoted(TIPBENCH_PYTHON) + " " + quoted(TIPBENCH_MAKE_REFERENCE) + " " + args + " > " +
                          quoted(log.string()) + " 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class Torchvision : public ::testing::Test {
 protected:
  // The reference files, made once per build for every test process (generated_once.h), so
  // editing make_reference.py makes them again. Exit 3: torchvision cannot be imported.
  static void SetUpTestSuite() {
    if (!fs::exists(TIPBENCH_PYTHON)) {
      skip_ = std::string("no Python interpreter at ") + TIPBENCH_PYTHON;
      return;
    }
    const auto made = tipbench::testing::generated_once(
        "torchvision_reference", read_bytes(TIPBENCH_MAKE_REFERENCE), [](const fs::path& into) {
          const fs::path log = into.string() + ".log";
          const int rc = run_python(quoted(into.string()), log);
          const std::string output = read_bytes(log);
          ::unlink(log.c_str());
          if (rc == 3) return "skip: torchvision not importable: " + output;
          return rc == 0 ? std::string() : "make_reference.py failed (exit " + std::to_string(rc) + "):\n" + output;
        });
    dir_ = made.dir;
    (made.skipped ? skip_ : error_) = made.error;
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
  }

  // Loads torchvision's state dict into our model (strict) and compares eval-mode outputs.
  static void expect_matches_torchvision(const std::string& name) {
    auto model = tm_::make_model(name);
    const auto report = tm_::load_state_dict(*model.ptr(), (dir_ / (name + "_state.pt")).string());
    EXPECT_TRUE(report.ok()) << report.describe();
    const auto io = tm_::load_tensors((dir_ / (name + "_io.pt")).string());  // {"input", "output"}
    ASSERT_EQ(io.size(), 2u);
    ASSERT_EQ(io[0].first, "input");
    const auto& x = io[0].second;
    const auto& want = io[1].second;
    model.ptr()->eval();
    torch::NoGradGuard no_grad;
    const auto got = forward(model, x);
    expect_close(got, want);
    std::printf("%s vs torchvision: max |diff| %.3g at output scale %.3g\n", name.c_str(),
                (got - want).abs().max().item<double>(), want.abs().max().item<double>());
  }

  static inline std::string skip_, error_;
  static inline fs::path dir_;
};

}  // namespace

TEST_F(Torchvision, ResNet18MatchesTorchvision) { expect_matches_torchvision("resnet18"); }
TEST_F(Torchvision, ResNet50MatchesTorchvision) { expect_matches_torchvision("resnet50"); }
TEST_F(Torchvision, ViTB16MatchesTorchvision) { expect_matches_torchvision("vit_b_16"); }

TEST_F(Torchvision, PythonLoadsOurStateDict) {
  torch::manual_seed(0);
  auto model = tm_::make_model("resnet18");
  const auto dir = fresh_scratch_dir("models_python_load");
  const auto path = dir / "resnet18_from_cpp.pt";
  tm_::save_state_dict(*model.ptr(), path.string());
  const auto log = dir / "check_load.log";
  ASSERT_EQ(run_python("--check-load " + quoted(path.string()), log), 0) << read_bytes(log);
  int64_t tensors = 0, elements = 0;
  double sum = 0;
  std::istringstream(read_bytes(log)) >> tensors >> elements >> sum;
  const auto params = model.ptr()->named_parameters();
  const auto buffers = model.ptr()->named_buffers();
  double want_sum = 0;
  int64_t want_elements = 0;
  for (const auto& p : params)
    want_sum += p.value().to(torch::kDouble).sum().item<double>(), want_elements += p.value().numel();
  for (const auto& b : buffers)
    want_sum += b.value().to(torch::kDouble).sum().item<double>(), want_elements += b.value().numel();
  EXPECT_EQ(tensors, static_cast<int64_t>(params.size() + buffers.size()));
  EXPECT_EQ(elements, want_elements);
  EXPECT_NEAR(sum, want_sum, 1e-6 * std::max(1.0, std::abs(want_sum)));
}

// ------------------------------------------------------------------------------------------ CUDA
TEST(ModelsCUDA, ForwardOnCuda_CUDA) {
  TIPBENCH_REQUIRE_CUDA();
  const torch::Device cuda(torch::kCUDA);
  torch::NoGradGuard no_grad;
  for (const std::string& name : std::vector<std::string>{"resnet50", "vit_b_16", "small_cnn"}) {
    torch::manual_seed(0);
    auto model = tm_::make_model(name, {.num_classes = 10, .channels_last = name != "vit_b_16"});
    torch::manual_seed(0);
    auto reference = tm_::make_model(name, {.num_classes = 10});
    model.ptr()->to(cuda);
    model.ptr()->eval();
    reference.ptr()->eval();
    const int64_t size = tm_::resolved_image_size(name, {});
    auto x = torch::randn({2, 3, size, size});
    auto y = forward(model, x.to(cuda));
    EXPECT_EQ(y.device().type(), torch::kCUDA);
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 10})) << name;
    expect_close(y.cpu(), forward(reference, x), 1e-3);  // TF32 may be on for cuDNN convs
  }
}
