// The `ddp` arms run PyTorch's DistributedDataParallel machinery (c10d::Reducer through
// DdpReducer), and it computes DDP's arithmetic: two Gloo ranks on the CPU (started by the
// --nproc launcher, running this binary's DdpRankProcess test) train small_cnn in double for a
// few steps on their halves of one batch, as `ddp` (DDP's default buckets), `ddp` with 0.1 MB
// buckets (many of them, so all-reduces really start during backward) and `ddp_no_overlap`.
// After every step each rank's averaged gradients must equal one process's gradients of the
// whole batch; at the end the ranks' parameters must be bit-identical; and the buckets the
// Reducer rebuilt after the first backward must be compute_bucket_assignment_by_size's for the
// order the gradients arrived in, with DDP's limits. BatchNorm runs in eval mode: in train mode
// its batch statistics differ per half by design.
#include "distributed/ddp_reducer.h"
#include "distributed/launcher.h"
#include "distributed/rank_env.h"
#include "distributed/session.h"
#include "tipbench/models/model.h"

#include "scratch_dir.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#include <torch/torch.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace tipbench::distributed;

constexpr int kSteps = 3;
constexpr std::int64_t kGlobalBatch = 8;
const char* const kOutVar = "TIPBENCH_TEST_DDP_OUT";

struct Variant {
  const char* name;
  DdpOptions options;
};
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"default", {}}, {"small_buckets", {.bucket_mb = 0.1}}, {"no_overlap", {.overlap = false}}};
  return v;
}

struct Replica {
  torch::nn::AnyModule model;
  std::shared_ptr<torch::nn::Module> module;
  std::unique_ptr<torch::optim::SGD> optimizer;
};

// The same weights on every rank and in the reference (same seed), in double.
Replica make_replica() {
  torch::manual_seed(7);
  Replica r{tipbench::models::make_model("small_cnn"), nullptr, nullptr};
  r.module = r.model.ptr();
  r.module->to(torch::kDouble);
  r.module->eval();
  r.optimizer = std::make_unique<torch::optim::SGD>(r.module->parameters(), torch::optim::SGDOptions(0.1));
  return r;
}

std::pair<torch::Tensor, torch::Tensor> global_batch() {
  torch::manual_seed(11);
  return {torch::randn({kGlobalBatch, 3, 32, 32}, torch::kDouble), torch::randint(10, {kGlobalBatch}, torch::kLong)};
}

torch::Tensor flat(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> parts;
  for (const auto& t : tensors) parts.push_back(t.detach().reshape({-1}));
  return torch::cat(parts);
}

torch::Tensor flat_parameters(const Replica& r) { return flat(r.module->parameters()); }

torch::Tensor flat_gradients(const Replica& r) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : r.module->parameters()) grads.push_back(p.grad());
  return flat(grads);
}

// One training step; with `ddp`, as DistributedDataParallel's forward and backward run it.
// Returns the gradients the optimizer stepped with.
torch::Tensor step(Replica& r, const torch::Tensor& x, const torch::Tensor& y, DdpReducer* ddp) {
  r.optimizer->zero_grad(true);
  if (ddp) ddp->before_forward();
  auto out = r.model.forward(x);
  if (ddp) ddp->after_forward();
  torch::nn::functional::cross_entropy(out, y).backward();
  auto grads = flat_gradients(r);
  r.optimizer->step();
  return grads;
}

void save(const torch::Tensor& t, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
}

torch::Tensor load(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::from_blob(bytes.data(), {static_cast<std::int64_t>(bytes.size() / sizeof(double))}, torch::kDouble)
      .clone();
}

std::string self_path() {
  std::vector<char> buf(4096);
  const auto n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

// The buckets compute_bucket_assignment_by_size makes of the gradients in arrival order, as
// Reducer::rebuild_buckets asks for them.
std::vector<std::vector<std::size_t>> expected_buckets(const DdpReducer& ddp) {
  std::vector<at::Tensor> arrived;
  std::vector<std::int64_t> indices;
  for (const auto i : ddp.gradient_order()) {
    arrived.push_back(ddp.parameters()[i]);
    indices.push_back(static_cast<std::int64_t>(i));
  }
  return std::get<0>(c10d::compute_bucket_assignment_by_size(arrived, ddp.bucket_size_limits(),
                                                             std::vector<bool>(arrived.size(), false), indices));
}

// Runs only as a rank of the test below (it is skipped in a normal test run).
TEST(DdpRankProcess, TrainsItsHalfOfTheBatch) {
  const char* out = std::getenv(kOutVar);
  const auto env = rank_env_from_environment();
  if (out == nullptr || !env) GTEST_SKIP() << "a rank body: runs inside DdpCorrectness only";
  Session& session = Session::start(*env, c10::Device(c10::kCPU));
  const auto [images, labels] = global_batch();
  const std::int64_t half = kGlobalBatch / env->world_size;
  const auto x = images.narrow(0, half * env->rank, half);
  const auto y = labels.narrow(0, half * env->rank, half);
  for (const auto& variant : variants()) {
    Replica r = make_replica();
    DdpReducer ddp(*r.module, session.gradient_group(), variant.options);
    for (int i = 0; i < kSteps; ++i) {
      save(step(r, x, y, &ddp), fs::path(out) / fmt::format("rank{}_{}_grads{}.bin", env->rank, variant.name, i));
    }
    save(flat_parameters(r), fs::path(out) / fmt::format("rank{}_{}_params.bin", env->rank, variant.name));
    const nlohmann::json buckets = {{"reducer", ddp.buckets()}, {"expected", expected_buckets(ddp)}};
    std::ofstream(fs::path(out) / fmt::format("rank{}_{}_buckets.json", env->rank, variant.name)) << buckets.dump();
  }
  session.stop_watchdog();
}

TEST(DdpCorrectness, TwoGlooRanksAverageAsOneProcessOnTheGlobalBatchWithDdpsBuckets) {
  const auto dir = tipbench::testing::fresh_scratch_dir("ddp_correctness");
  ::setenv(kOutVar, dir.c_str(), 1);
  const int code = launch_local_ranks(
      {.executable = self_path(), .argv = {self_path(), "--gtest_filter=DdpRankProcess.*"}, .nproc = 2});
  ::unsetenv(kOutVar);
  ASSERT_EQ(code, 0);

  // One process, the whole batch: the gradients each step should average to.
  Replica reference = make_replica();
  const auto [images, labels] = global_batch();
  std::vector<torch::Tensor> expected_grads;
  for (int i = 0; i < kSteps; ++i) expected_grads.push_back(step(reference, images, labels, nullptr));
  const auto initial = flat_parameters(make_replica());

  for (const auto& variant : variants()) {
    SCOPED_TRACE(variant.name);
    for (int i = 0; i < kSteps; ++i) {
      for (int rank : {0, 1}) {
        const auto grads = load(dir / fmt::format("rank{}_{}_grads{}.bin", rank, variant.name, i));
        ASSERT_EQ(grads.numel(), expected_grads[i].numel());
        // (g0 + g1) / 2 against one pass over the batch: the same sums in another order. Each
        // gradient element sums at most 8 x 16 x 16 products, so in double the two differ by a
        // few thousand ulps of the largest gradient at most: 1e-10 of it is far above that and
        // far below any real difference (a missing or doubled half moves gradients by O(1)).
        const double scale = expected_grads[i].abs().max().item<double>();
        EXPECT_LE((grads - expected_grads[i]).abs().max().item<double>(), 1e-10 * scale)
            << "step " << i << ", rank " << rank;
      }
    }
    const auto r0 = load(dir / fmt::format("rank0_{}_params.bin", variant.name));
    const auto r1 = load(dir / fmt::format("rank1_{}_params.bin", variant.name));
    EXPECT_TRUE(torch::equal(r0, r1)) << "ranks differ by up to " << (r0 - r1).abs().max().item<double>();
    EXPECT_GT((r0 - initial).abs().max().item<double>(), 1e-3) << "training moved the weights";

    for (int rank : {0, 1}) {
      std::ifstream in(dir / fmt::format("rank{}_{}_buckets.json", rank, variant.name));
      const auto buckets = nlohmann::json::parse(in);
      const auto reducer = buckets.at("reducer").get<std::vector<std::vector<std::size_t>>>();
      EXPECT_EQ(reducer, buckets.at("expected").get<std::vector<std::vector<std::size_t>>>()) << "rank " << rank;
      // small_cnn's gradients in double: 3.1 MB, 2.4 MB of it the last conv's weight.
      const std::string name = variant.name;
      const std::size_t expected_count = name == "no_overlap" ? 1 : name == "default" ? 2 : 4;
      // no_overlap: one; default: a first bucket of >= 1 MiB, then the rest; 0.1 MB: one per conv
      // stage at least.
      if (name == "small_buckets") {
        EXPECT_GE(reducer.size(), expected_count);
      } else {
        EXPECT_EQ(reducer.size(), expected_count);
      }
    }
  }
  tipbench::testing::remove_tree(dir);
}

}  // namespace
