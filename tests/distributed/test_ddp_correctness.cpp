// The bucketed all-reduce is DistributedDataParallel's arithmetic: two Gloo ranks on the CPU
// (started by the --nproc launcher, running this binary's DdpRankProcess test) train small_cnn for
// a few steps on their halves of one batch; afterwards their parameters must be bit-identical
// and match one process trained on the whole batch, with and without overlap. BatchNorm runs in
// eval mode: in train mode its batch statistics differ per half by design.
#include "distributed/bucket_reducer.h"
#include "distributed/launcher.h"
#include "distributed/rank_env.h"
#include "distributed/session.h"
#include "tipbench/models/model.h"

#include "scratch_dir.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
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

struct Replica {
  torch::nn::AnyModule model;
  std::shared_ptr<torch::nn::Module> module;
  std::unique_ptr<torch::optim::SGD> optimizer;
};

// The same weights on every rank and in the reference (same seed).
Replica make_replica() {
  torch::manual_seed(7);
  Replica r{tipbench::models::make_model("small_cnn"), nullptr, nullptr};
  r.module = r.model.ptr();
  r.module->eval();
  r.optimizer = std::make_unique<torch::optim::SGD>(r.module->parameters(), torch::optim::SGDOptions(0.1));
  return r;
}

std::pair<torch::Tensor, torch::Tensor> global_batch() {
  torch::manual_seed(11);
  return {torch::randn({kGlobalBatch, 3, 32, 32}), torch::randint(10, {kGlobalBatch}, torch::kLong)};
}

torch::Tensor flat_parameters(const Replica& r) {
  std::vector<torch::Tensor> flat;
  for (const auto& p : r.module->parameters()) flat.push_back(p.detach().reshape({-1}));
  return torch::cat(flat);
}

void step(Replica& r, const torch::Tensor& x, const torch::Tensor& y, BucketReducer* reducer) {
  r.optimizer->zero_grad(true);
  torch::nn::functional::cross_entropy(r.model.forward(x), y).backward();
  if (reducer) reducer->finish();
  r.optimizer->step();
}

void save(const torch::Tensor& t, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
}

torch::Tensor load(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::from_blob(bytes.data(), {static_cast<std::int64_t>(bytes.size() / sizeof(float))}).clone();
}

std::string self_path() {
  std::vector<char> buf(4096);
  const auto n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
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
  for (const bool overlap : {true, false}) {
    Replica r = make_replica();
    // 0.1 MB buckets: small_cnn's 1.5 MB of gradients span many, so overlap really happens.
    BucketReducer reducer(r.module->parameters(), session.gradients(), env->world_size,
                          {.bucket_mb = 0.1, .overlap = overlap});
    ASSERT_GT(reducer.bucket_count(), 3);
    for (int i = 0; i < kSteps; ++i) step(r, x, y, &reducer);
    save(flat_parameters(r), fs::path(out) / fmt::format("rank{}_overlap{}.bin", env->rank, overlap ? 1 : 0));
  }
  session.stop_watchdog();
}

TEST(DdpCorrectness, TwoGlooRanksMatchEachOtherBitForBitAndOneProcessOnTheGlobalBatch) {
  const auto dir = tipbench::testing::fresh_scratch_dir("ddp_correctness");
  ::setenv(kOutVar, dir.c_str(), 1);
  const int code = launch_local_ranks(
      {.executable = self_path(), .argv = {self_path(), "--gtest_filter=DdpRankProcess.*"}, .nproc = 2});
  ::unsetenv(kOutVar);
  ASSERT_EQ(code, 0);

  Replica reference = make_replica();
  const auto [images, labels] = global_batch();
  for (int i = 0; i < kSteps; ++i) step(reference, images, labels, nullptr);
  const auto expected = flat_parameters(reference);
  const auto initial = flat_parameters(make_replica());

  for (const int overlap : {1, 0}) {
    SCOPED_TRACE(overlap ? "overlap" : "no overlap");
    const auto r0 = load(dir / fmt::format("rank0_overlap{}.bin", overlap));
    const auto r1 = load(dir / fmt::format("rank1_overlap{}.bin", overlap));
    ASSERT_EQ(r0.numel(), expected.numel());
    ASSERT_EQ(r1.numel(), expected.numel());
    EXPECT_TRUE(torch::equal(r0, r1)) << "ranks differ by up to " << (r0 - r1).abs().max().item<float>();
    // Training moved the weights, and the ranks moved them as the global batch does.
    EXPECT_GT((r0 - initial).abs().max().item<float>(), 1e-3);
    EXPECT_TRUE(torch::allclose(r0, expected, /*rtol=*/1e-4, /*atol=*/1e-5))
        << "max difference from one process: " << (r0 - expected).abs().max().item<float>();
  }
  tipbench::testing::remove_tree(dir);
}

}  // namespace
