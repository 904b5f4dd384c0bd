// The input-pipeline ladder's rungs in the loader: uint8 batches normalised afterwards equal the
// float batches up to the uint8 rounding; the decoded-image cache changes no batch, serves every
// later epoch from RAM and never caches a corrupt file (it is skipped and counted every epoch).
#include "tipbench/data/device_normalize.h"
#include "tipbench/data/loader.h"
#include "tipbench/results/result.h"  // InputError

#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>

namespace {

namespace data = tipbench::data;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::write_bytes;

std::string ladder_dataset(const std::string& name, std::int64_t images) {
  const auto dir = fresh_scratch_dir("ladder_" + name);
  data::DatasetSpec s;
  s.images = images;
  s.width = 80;
  s.height = 60;
  s.classes = 5;
  data::make_dataset(dir.string(), s);
  return dir.string();
}

data::LoaderOptions ladder_options(int workers) {
  data::LoaderOptions o;
  o.batch_size = 8;
  o.workers = workers;
  o.augment.output_size = 16;
  o.seed = 5;
  return o;
}

// The float path writes clamp(v) * s + t per value, the uint8 path round(clamp(v)) * s + t with
// the same s = 1/(255 std) and t = -mean/std: they differ by at most half a grey level times the
// largest s (std 0.224: 0.00875), plus float32 rounding of two products of magnitude < 3
// (< 1e-6). 1e-5 covers that rounding a hundred times over, on any CPU.
TEST(PipelineLadder, Uint8BatchesNormalisedEqualTheFloatBatchesUpToRounding) {
  const std::string dir = ladder_dataset("uint8", 24);
  auto float_options = ladder_options(2);
  auto uint8_options = float_options;
  uint8_options.uint8_batches = true;
  data::Loader floats(data::read_manifest(dir), dir, float_options);
  data::Loader bytes(data::read_manifest(dir), dir, uint8_options);
  const data::DeviceNormalizer normalize(c10::Device(c10::kCPU), uint8_options.augment);
  const float max_scale =
      1.0f / (255.0f * *std::min_element(float_options.augment.std.begin(), float_options.augment.std.end()));
  const double tolerance = 0.5 * max_scale + 1e-5;
  double largest = 0;
  for (int i = 0; i < 6; ++i) {  // two epochs
    const auto f = floats.next();
    const auto b = bytes.next();
    ASSERT_EQ(b.images.scalar_type(), torch::kByte);
    ASSERT_EQ(f.indices, b.indices);
    EXPECT_TRUE(torch::equal(f.labels, b.labels));
    const auto x = normalize(b.images);
    ASSERT_EQ(x.scalar_type(), torch::kFloat);
    ASSERT_EQ(x.sizes(), f.images.sizes());
    largest = std::max(largest, (x - f.images).abs().max().item<double>());
  }
  EXPECT_LE(largest, tolerance);
  EXPECT_GT(largest, 0) << "the rounding must show somewhere, or the two paths were not both run";
  EXPECT_EQ(bytes.batch_bytes() * 4 - floats.batch_bytes(), 3 * 8 * sizeof(std::int64_t))
      << "a quarter of the pixel bytes";
  EXPECT_THROW(normalize(torch::zeros({1, 3, 4, 4})), std::invalid_argument);
}

TEST(PipelineLadder, TheDecodedCacheChangesNoBatchAndServesLaterEpochs) {
  const std::string dir = ladder_dataset("cache", 24);
  for (int workers : {0, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    auto plain_options = ladder_options(workers);
    auto cached_options = plain_options;
    cached_options.cache_decoded = true;
    data::Loader plain(data::read_manifest(dir), dir, plain_options);
    data::Loader cached(data::read_manifest(dir), dir, cached_options);
    for (int i = 0; i < 9; ++i) {  // three epochs of 3 batches
      const auto p = plain.next();
      const auto c = cached.next();
      ASSERT_EQ(p.indices, c.indices);
      EXPECT_TRUE(torch::equal(p.images, c.images)) << "batch " << i;
    }
    EXPECT_EQ(cached.cached_bytes(), 24 * 80 * 60 * 3);
    EXPECT_GE(cached.cache_hits(), 48) << "epochs 2 and 3 come from RAM";
    EXPECT_EQ(plain.cached_bytes(), 0);
    EXPECT_EQ(plain.cache_hits(), 0);
  }
}

TEST(PipelineLadder, ACorruptFileIsNeverCachedAndIsSkippedEveryEpoch) {
  const std::string dir = ladder_dataset("corrupt", 16);
  const auto manifest = data::read_manifest(dir);
  write_bytes(dir + "/" + manifest.files[3].path, "not a JPEG");
  auto o = ladder_options(0);
  o.cache_decoded = true;
  o.uint8_batches = true;
  data::Loader loader(manifest, dir, o);
  int skipped = 0;
  for (int i = 0; i < 4; ++i) skipped += loader.next().skipped_corrupt;  // two epochs of 2 batches
  EXPECT_EQ(skipped, 2);
  EXPECT_EQ(loader.skipped_total(), 2);
  EXPECT_EQ(loader.cached_bytes(), 15 * 80 * 60 * 3);
  ASSERT_EQ(loader.bad_files().size(), 1u);
  EXPECT_EQ(loader.bad_files()[0].path, manifest.files[3].path);

  o.corrupt_policy = data::CorruptPolicy::fail;
  data::Loader failing(manifest, dir, o);
  EXPECT_THROW(
      {
        for (int i = 0; i < 2; ++i) failing.next();
      },
      tipbench::InputError);
}

}  // namespace
