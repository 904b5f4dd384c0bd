// The GPU-decode rung of the pipeline ladder (LoaderOptions::decode_on_device). On any machine:
// the workers hand over each file's bytes with the crop box the uint8 path draws, catch truncated,
// garbage and missing files under either --corrupt-policy, and the device augmentation (crop,
// antialiased resize, flip of a decoded tensor) gives the host path's pixels within a grey
// level. On a GPU (*_CUDA): nvJPEG decodes the generated dataset to libjpeg-turbo's pixels within
// torchvision's tolerance, and the feeder's decoded batches match the CPU uint8 batches.
#include "tipbench/data/device_augment.h"
#include "tipbench/data/device_feeder.h"
#include "tipbench/data/jpeg.h"
#include "tipbench/data/loader.h"
#include "tipbench/data/nvjpeg_decoder.h"
#include "tipbench/results/result.h"  // InputError

#include "cuda_required.h"
#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <iostream>
#include <map>
#include <set>

namespace {

namespace data = tipbench::data;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::write_bytes;

std::string gpu_decode_dataset(const std::string& name, std::int64_t images, int width = 80, int height = 60) {
  const auto dir = fresh_scratch_dir("gpu_decode_" + name);
  data::DatasetSpec s;
  s.images = images;
  s.width = width;
  s.height = height;
  s.classes = 5;
  data::make_dataset(dir.string(), s);
  return dir.string();
}

data::LoaderOptions decode_options(int workers, int output_size = 32) {
  data::LoaderOptions o;
  o.batch_size = 8;
  o.workers = workers;
  o.augment.output_size = output_size;
  o.seed = 7;
  return o;
}

// File 2 truncated to a third (its header intact), file 5 garbage, file 11 deleted.
void damage_files_2_5_11(const std::string& dir, const data::Manifest& manifest) {
  const std::string truncated = dir + "/" + manifest.files[2].path;
  const std::string whole = read_bytes(truncated);
  write_bytes(truncated, whole.substr(0, whole.size() / 3));
  write_bytes(dir + "/" + manifest.files[5].path, "not a jpeg at all");
  ::unlink((dir + "/" + manifest.files[11].path).c_str());
}

// (3, H, W) uint8: the layout nvJPEG writes, from libjpeg-turbo's interleaved RGB.
torch::Tensor planar(const data::RgbImage& image) {
  auto hwc =
      torch::from_blob(const_cast<std::uint8_t*>(image.pixels.data()), {image.height, image.width, 3}, torch::kByte);
  return hwc.permute({2, 0, 1}).contiguous();
}

torch::Tensor cpu_decoded(std::span<const std::uint8_t> bytes) {
  data::RgbImage image;
  std::string error;
  EXPECT_TRUE(data::decode_jpeg(bytes, image, error)) << error;
  return planar(image);
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kInt) - b.to(torch::kInt)).abs().max().item<int>();
}

double mean_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat) - b.to(torch::kFloat)).abs().mean().item<float>();
}

// Both resize with the triangle filter Pillow uses (torch's antialias=True was ported from
// Pillow's ImagingResample; augment.cpp computes the same taps): the same weights, summed in
// float32 in another order. Sums differ by about 1e-4 of a grey level, so a rounded value differs
// by at most 1, and only where the exact value lies that close to a half: a few in ten thousand
// values (9 of 30720 in 10 boxes of 3 x 32 x 32, measured here). Over 16 boxes x 3 x 48 x 48, 1%
// differing would already be a different filter.
TEST(DeviceAugment, CropResizeFlipOfATensorMatchesTheHostPathWithinAGreyLevel) {
  const std::string dir = gpu_decode_dataset("augment", 4);
  const auto manifest = data::read_manifest(dir);
  data::AugmentOptions augment;
  augment.output_size = 48;  // above some boxes' width and below others': up- and downscaling
  data::ResizeScratch scratch;
  std::int64_t values = 0, differing = 0;
  bool flipped = false, upscaled = false, downscaled = false;
  for (std::uint64_t k = 0; k < 16; ++k) {
    const auto bytes = read_bytes(dir + "/" + manifest.files[k % 4].path);
    const std::vector<std::uint8_t> file(bytes.begin(), bytes.end());
    data::RgbImage image;
    std::string error;
    ASSERT_TRUE(data::decode_jpeg(file, image, error)) << error;
    data::Rng rng = data::Rng::keyed({k, 99});
    const data::CropBox box = data::random_resized_crop(image.width, image.height, augment, rng);
    flipped |= box.flip;
    upscaled |= box.width < 48;
    downscaled |= box.width > 48;
    std::vector<std::uint8_t> host(3 * 48 * 48);
    data::crop_resize_u8(image, box, augment, host.data(), scratch);
    auto tensor = torch::empty({3, 48, 48}, torch::kByte);
    data::crop_resize_flip_into(planar(image), box, tensor);
    const auto expected = torch::from_blob(host.data(), {3, 48, 48}, torch::kByte);
    EXPECT_LE(max_abs_diff(tensor, expected), 1) << "box " << k;
    differing += (tensor != expected).sum().item<std::int64_t>();
    values += expected.numel();
  }
  EXPECT_LT(double(differing) / double(values), 0.01) << differing << " of " << values;
  EXPECT_TRUE(flipped && upscaled && downscaled) << "the boxes cover flips, up- and downscaling";
  auto out = torch::empty({3, 32, 32}, torch::kByte);
  EXPECT_THROW(data::crop_resize_flip_into(torch::zeros({3, 10, 10}, torch::kByte), {5, 5, 10, 10, false}, out),
               std::invalid_argument);
  EXPECT_THROW(data::crop_resize_flip_into(torch::zeros({3, 10, 10}), {0, 0, 5, 5, false}, out), std::invalid_argument);
}

// The workers read and check each file and draw its crop box; decoding those bytes (here on the
// CPU) and cropping on the "device" gives the uint8 path's batch: same samples, same labels, same
// boxes (another box would differ by far more than a grey level).
TEST(EncodedBatches, WorkersHandOverTheFilesWithTheCropsOfTheUint8Path) {
  const std::string dir = gpu_decode_dataset("encoded", 24);
  const auto manifest = data::read_manifest(dir);
  for (int workers : {0, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    auto bytes_options = decode_options(workers);
    bytes_options.uint8_batches = true;
    auto encoded_options = decode_options(workers);
    encoded_options.decode_on_device = true;
    data::Loader pixels(manifest, dir, bytes_options);
    data::Loader files(manifest, dir, encoded_options);
    EXPECT_EQ(files.batch_bytes(), 8 * (manifest.total_bytes() / 24 + 8));
    for (int b = 0; b < 6; ++b) {  // two epochs
      const auto expected = pixels.next();
      const auto batch = files.next();
      EXPECT_FALSE(batch.images.defined());
      ASSERT_EQ(batch.indices, expected.indices);
      EXPECT_TRUE(torch::equal(batch.labels, expected.labels));
      ASSERT_EQ(batch.encoded.size(), static_cast<std::size_t>(batch.rows()));
      for (std::int64_t row = 0; row < batch.rows(); ++row) {
        const auto& file = batch.encoded[static_cast<std::size_t>(row)];
        EXPECT_EQ(file.width, 80);
        EXPECT_EQ(file.height, 60);
        auto out = torch::empty({3, 32, 32}, torch::kByte);
        data::crop_resize_flip_into(cpu_decoded(file.bytes), file.box, out);
        EXPECT_LE(max_abs_diff(out, expected.images[row]), 1) << "batch " << b << " row " << row;
      }
    }
  }
}

TEST(EncodedBatches, TheWorkersCatchTruncatedGarbageAndMissingFilesUnderEitherPolicy) {
  const std::string dir = gpu_decode_dataset("corrupt", 16);
  const auto manifest = data::read_manifest(dir);
  damage_files_2_5_11(dir, manifest);
  for (int workers : {0, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    auto o = decode_options(workers);
    o.batch_size = 4;
    o.decode_on_device = true;
    data::Loader loader(manifest, dir, o);
    int corrupt = 0, missing = 0;
    std::set<std::int64_t> seen;
    for (int b = 0; b < 4; ++b) {  // one epoch
      const auto batch = loader.next();
      corrupt += batch.skipped_corrupt;
      missing += batch.skipped_missing;
      EXPECT_EQ(batch.rows() + batch.skipped_corrupt + batch.skipped_missing, 4);
      EXPECT_EQ(batch.labels.size(0), batch.rows());
      seen.insert(batch.indices.begin(), batch.indices.end());
    }
    EXPECT_EQ(corrupt, 2);
    EXPECT_EQ(missing, 1);
    EXPECT_EQ(seen.size(), 13u);
    std::map<std::string, std::string> reasons;
    for (const auto& f : loader.bad_files()) reasons[f.path] = f.reason;
    EXPECT_NE(reasons[manifest.files[2].path].find("truncated"), std::string::npos) << reasons[manifest.files[2].path];
    EXPECT_NE(reasons[manifest.files[5].path].find("cannot decode"), std::string::npos);
    EXPECT_NE(reasons[manifest.files[11].path].find("cannot read"), std::string::npos);

    // A file the workers passed and the device refused: counted the same way.
    const auto before = loader.skipped_total();
    loader.reject(3, "cannot decode on the device: test");
    EXPECT_EQ(loader.skipped_total(), before + 1);

    o.corrupt_policy = data::CorruptPolicy::fail;
    data::Loader strict(manifest, dir, o);
    EXPECT_THROW(strict.reject(3, "cannot decode on the device: test"), tipbench::InputError);
    try {
      for (int b = 0; b < 4; ++b) strict.next();
      FAIL() << "expected InputError";
    } catch (const tipbench::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--corrupt-policy fail"), std::string::npos) << e.what();
    }
  }
}

TEST(NvjpegDecoder, IsUnavailableOnTheCpuWithTheReason) {
  const auto why = data::nvjpeg_unavailable_reason(torch::kCPU);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find(data::built_with_nvjpeg() ? "CUDA device" : "no nvJPEG"), std::string::npos) << *why;
  EXPECT_THROW(data::NvjpegDecoder{torch::kCPU}, std::runtime_error);
}

// torchvision's own test of its nvJPEG decode against libjpeg-turbo (test_decode_jpegs_cuda)
// allows a mean absolute difference below 2 grey levels: two conforming decoders differ in
// their IDCT rounding (ITU-T T.83 allows each sample a small error) and chroma upsampling. The
// same bound here, per image. Measured here with libjpeg-turbo alone on this dataset (500x375,
// grain in colour): another IDCT (JDCT_FLOAT) moves the mean by 0.04, but replicated instead of
// interpolated chroma (do_fancy_upsampling off) by 3.1-3.4 levels: the bound needs nvJPEG's
// interpolated upsampling (NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION). And the bound can fail:
// neighbouring images differ by 43-80 levels on average (measured with Pillow).
TEST(NvjpegDecoder_CUDA, DecodesTheGeneratedDatasetToLibjpegTurbosPixels) {
  TIPBENCH_REQUIRE_CUDA();
  if (auto why = data::nvjpeg_unavailable_reason(torch::Device(torch::kCUDA, 0))) GTEST_SKIP() << *why;
  const std::string dir = gpu_decode_dataset("nvjpeg", 12, 500, 375);
  const auto manifest = data::read_manifest(dir);
  std::vector<std::vector<std::uint8_t>> files;
  for (const auto& f : manifest.files) {
    const auto bytes = read_bytes(dir + "/" + f.path);
    files.emplace_back(bytes.begin(), bytes.end());
  }
  files.push_back(std::vector<std::uint8_t>(300, 0x42));  // garbage in the batch: refused alone
  std::vector<std::span<const std::uint8_t>> spans(files.begin(), files.end());
  data::NvjpegDecoder decoder(torch::Device(torch::kCUDA, 0));
  std::cout << "nvJPEG backend: " << decoder.backend() << "\n";
  const auto decoded = decoder.decode(spans);
  ASSERT_EQ(decoded.size(), files.size());
  EXPECT_FALSE(decoded.back().image.defined());
  EXPECT_FALSE(decoded.back().error.empty());
  double worst = 0;
  for (std::size_t i = 0; i + 1 < files.size(); ++i) {
    SCOPED_TRACE("image " + std::to_string(i));
    ASSERT_TRUE(decoded[i].image.defined()) << decoded[i].error;
    const auto gpu = decoded[i].image.cpu();
    const auto cpu = cpu_decoded(files[i]);
    ASSERT_EQ(gpu.sizes(), cpu.sizes());
    const double mean = mean_abs_diff(gpu, cpu);
    worst = std::max(worst, mean);
    EXPECT_LT(mean, 2.0) << "max " << max_abs_diff(gpu, cpu);
    const auto other = cpu_decoded(files[(i + 1) % (files.size() - 1)]);
    EXPECT_GT(mean_abs_diff(gpu, other), 4.0) << "another image is not within the bound";
  }
  std::cout << "largest mean |nvJPEG - libjpeg-turbo| over " << files.size() - 1 << " images: " << worst << "\n";
  // The refused batch was redone image by image: the next batch goes through the batched call.
  spans.pop_back();
  const auto again = decoder.decode(spans);
  for (const auto& d : again) EXPECT_TRUE(d.image.defined()) << d.error;
}

// The feeder's decoded batches against the CPU uint8 path's batches of the same seed: the same
// rows and labels, pixels within the decode bound (resizing averages the decoders' differences).
TEST(DeviceFeeder_CUDA, BatchesDecodedOnTheDeviceMatchTheCpuUint8Batches) {
  TIPBENCH_REQUIRE_CUDA();
  const torch::Device device(torch::kCUDA, 0);
  if (auto why = data::nvjpeg_unavailable_reason(device)) GTEST_SKIP() << *why;
  const std::string dir = gpu_decode_dataset("feeder", 32, 500, 375);
  const auto manifest = data::read_manifest(dir);
  for (bool pinned : {true, false}) {
    SCOPED_TRACE(pinned ? "pinned" : "pageable");
    auto reference_options = decode_options(2, 64);
    reference_options.uint8_batches = true;
    auto o = decode_options(2, 64);
    o.decode_on_device = true;
    o.pin_memory = pinned;
    data::Loader reference(manifest, dir, reference_options);
    data::Loader loader(manifest, dir, o);
    data::DeviceFeeder feeder(loader, device, pinned);
    EXPECT_NE(feeder.decode_backend().find("nvJPEG"), std::string::npos) << feeder.decode_backend();
    EXPECT_NE(feeder.copy_mode().find("nvJPEG"), std::string::npos);
    feeder.reset_counters();
    auto busy = torch::randn({1024, 1024}, device);
    for (int b = 0; b < 8; ++b) {                                        // two epochs
      for (int k = 0; k < 4; ++k) busy = torch::mm(busy, busy).tanh_();  // the compute stream is busy
      const auto batch = feeder.take();
      const auto expected = reference.next();
      ASSERT_EQ(batch.rows, expected.rows());
      EXPECT_EQ(batch.skipped, 0);
      EXPECT_EQ(batch.images.device(), device);
      EXPECT_EQ(batch.images.scalar_type(), torch::kByte);
      const auto got = (batch.images * 1).cpu();  // read on the compute stream, after take()'s wait
      EXPECT_TRUE(torch::equal(batch.labels.cpu(), expected.labels)) << b;
      EXPECT_LT(mean_abs_diff(got, expected.images), 2.0) << "batch " << b;
      feeder.prefetch();
    }
    const auto ms = feeder.mean_copy_ms();
    ASSERT_TRUE(ms.has_value());
    EXPECT_GT(*ms, 0);
  }
}

// Truncated, garbage and missing files in batches decoded on the device: skipped and counted in
// the device batches (skip), or InputError out of take() (fail).
TEST(DeviceFeeder_CUDA, CorruptFilesInDeviceDecodedBatchesFollowThePolicy) {
  TIPBENCH_REQUIRE_CUDA();
  const torch::Device device(torch::kCUDA, 0);
  if (auto why = data::nvjpeg_unavailable_reason(device)) GTEST_SKIP() << *why;
  const std::string dir = gpu_decode_dataset("feeder_corrupt", 16);
  const auto manifest = data::read_manifest(dir);
  damage_files_2_5_11(dir, manifest);
  auto o = decode_options(2);
  o.batch_size = 4;
  o.decode_on_device = true;
  o.pin_memory = true;
  {
    data::Loader loader(manifest, dir, o);
    data::DeviceFeeder feeder(loader, device, /*pinned=*/true);
    int skipped = 0;
    std::int64_t rows = 0;
    for (int b = 0; b < 4; ++b) {
      const auto batch = feeder.take();
      EXPECT_EQ(batch.images.size(0), batch.rows);
      EXPECT_EQ(batch.labels.size(0), batch.rows);
      skipped += batch.skipped;
      rows += batch.rows;
      feeder.prefetch();
    }
    EXPECT_EQ(skipped, 3);
    EXPECT_EQ(rows, 13);
  }
  o.corrupt_policy = data::CorruptPolicy::fail;
  data::Loader loader(manifest, dir, o);
  data::DeviceFeeder feeder(loader, device, /*pinned=*/true);
  try {
    for (int b = 0; b < 4; ++b) {
      feeder.take();
      feeder.prefetch();
    }
    FAIL() << "expected InputError";
  } catch (const tipbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--corrupt-policy fail"), std::string::npos) << e.what();
  }
}

}  // namespace
