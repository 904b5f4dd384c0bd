// The data pipeline's torch-free parts: the dataset generator is deterministic (same seed, same
// checksums) and idempotent (a complete dataset is reused, a partial one completed, another
// spec refused); the JPEG codec round-trips and rejects corrupt data; the augmentation writes
// the right shape and range and draws crops within torchvision's bounds.
#include "tipbench/data/augment.h"
#include "tipbench/data/dataset.h"
#include "tipbench/data/draw.h"
#include "tipbench/data/jpeg.h"
#include "tipbench/data/loader_options.h"
#include "tipbench/results/result.h"
#include "tipbench/common/sha256.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

namespace {

namespace data = tipbench::data;
namespace fs = std::filesystem;
using tipbench::testing::fresh_scratch_dir;
using tipbench::testing::read_bytes;
using tipbench::testing::write_bytes;

data::DatasetSpec small_spec(std::uint64_t seed = 0) {
  data::DatasetSpec s;
  s.images = 24;
  s.width = 96;
  s.height = 72;
  s.classes = 4;
  s.seed = seed;
  return s;
}

std::vector<std::string> checksums(const data::Manifest& m) {
  std::vector<std::string> out;
  for (const auto& f : m.files) out.push_back(f.sha256);
  return out;
}

std::int64_t mtime_ns(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
}

TEST(DatasetGenerator, SameSeedSameChecksumsOtherSeedOthers) {
  const auto a = fresh_scratch_dir("data_det_a"), b = fresh_scratch_dir("data_det_b"),
             c = fresh_scratch_dir("data_det_c");
  const auto ra = data::make_dataset(a.string(), small_spec(7), {.threads = 1});
  const auto rb = data::make_dataset(b.string(), small_spec(7), {.threads = 3});  // thread count does not matter
  const auto rc = data::make_dataset(c.string(), small_spec(8));
  EXPECT_EQ(ra.outcome, data::MakeOutcome::made);
  EXPECT_EQ(ra.written, 24);
  EXPECT_EQ(checksums(ra.manifest), checksums(rb.manifest));
  EXPECT_EQ(read_bytes(a / "manifest.json"), read_bytes(b / "manifest.json"));
  const auto ca = checksums(ra.manifest), cc = checksums(rc.manifest);
  for (std::size_t i = 0; i < ca.size(); ++i) EXPECT_NE(ca[i], cc[i]) << i;
  // Every checksum is distinct: no two images are the same.
  EXPECT_EQ(std::set<std::string>(ca.begin(), ca.end()).size(), ca.size());
}

TEST(DatasetGenerator, ManifestListsEveryFileWithLabelSizeAndChecksum) {
  const auto dir = fresh_scratch_dir("data_manifest");
  const auto spec = small_spec();
  data::make_dataset(dir.string(), spec);
  const data::Manifest m = data::read_manifest(dir.string());
  EXPECT_EQ(m.spec, spec);
  ASSERT_EQ(static_cast<std::int64_t>(m.files.size()), spec.images);
  std::vector<int> per_class(spec.classes, 0);
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    const auto& f = m.files[i];
    EXPECT_EQ(f.path, data::sample_path(spec, static_cast<std::int64_t>(i)));
    EXPECT_EQ(f.path.substr(0, 8), "class_0" + std::to_string(f.label));  // ImageFolder: the directory is the class
    const std::string bytes = read_bytes(dir / f.path);
    EXPECT_EQ(static_cast<std::int64_t>(bytes.size()), f.bytes);
    EXPECT_EQ(tipbench::sha256_hex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}), f.sha256);
    ++per_class[f.label];
  }
  for (int k = 0; k < spec.classes; ++k) EXPECT_EQ(per_class[k], spec.images / spec.classes) << "class " << k;
  EXPECT_EQ(tipbench::sha256_hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(DatasetGenerator, CompleteDatasetIsReusedUntouched) {
  const auto dir = fresh_scratch_dir("data_reuse");
  data::make_dataset(dir.string(), small_spec());
  const std::string some = (dir / data::sample_path(small_spec(), 5)).string();
  const auto before = mtime_ns(some);
  const auto manifest_before = mtime_ns((dir / "manifest.json").string());
  const auto r = data::make_dataset(dir.string(), small_spec());
  EXPECT_EQ(r.outcome, data::MakeOutcome::reused);
  EXPECT_EQ(r.written, 0);
  EXPECT_EQ(mtime_ns(some), before);
  EXPECT_EQ(mtime_ns((dir / "manifest.json").string()), manifest_before);
}

TEST(DatasetGenerator, PartialDatasetIsDetectedAndCompleted) {
  const auto dir = fresh_scratch_dir("data_partial");
  const auto spec = small_spec();
  const auto first = data::make_dataset(dir.string(), spec);
  // A deleted file and a file changed in place (same size: only the checksum tells).
  ::unlink((dir / data::sample_path(spec, 3)).c_str());
  std::string changed = read_bytes(dir / data::sample_path(spec, 9));
  changed[changed.size() / 2] ^= 0x5a;
  write_bytes(dir / data::sample_path(spec, 9), changed);
  const auto r = data::make_dataset(dir.string(), spec);
  EXPECT_EQ(r.outcome, data::MakeOutcome::completed);
  EXPECT_EQ(r.written, 2);
  EXPECT_NE(r.partial.find("2 of 24"), std::string::npos) << r.partial;
  EXPECT_EQ(checksums(r.manifest), checksums(first.manifest));  // regenerated byte for byte
  // An interrupted make leaves images but no manifest.
  ::unlink((dir / "manifest.json").c_str());
  const auto again = data::make_dataset(dir.string(), spec);
  EXPECT_EQ(again.outcome, data::MakeOutcome::completed);
  EXPECT_NE(again.partial.find("no manifest.json"), std::string::npos) << again.partial;
  EXPECT_EQ(checksums(again.manifest), checksums(first.manifest));
}

// A make interrupted between writing a temporary and renaming it leaves the temporary; the
// next make (holding the directory's lock) removes every such file, in the directory and its
// class folders, and says how many. Other files are left alone.
TEST(DatasetGenerator, StaleTemporariesOfAnInterruptedMakeAreRemoved) {
  const auto dir = fresh_scratch_dir("data_stale");
  const auto spec = small_spec();
  data::make_dataset(dir.string(), spec);
  const auto class_dir = (dir / data::sample_path(spec, 0)).parent_path();
  write_bytes(class_dir / "img_000000.jpg.tmp-AbC123", "junk");
  write_bytes(dir / "manifest.json.tmp-XyZ789", "junk");
  write_bytes(dir / "notes.tmp-kept", "not a temporary of ours: 4 characters after tmp-");
  const auto r = data::make_dataset(dir.string(), spec);
  EXPECT_EQ(r.outcome, data::MakeOutcome::reused);
  EXPECT_EQ(r.stale_removed, 2);
  EXPECT_FALSE(fs::exists(class_dir / "img_000000.jpg.tmp-AbC123"));
  EXPECT_FALSE(fs::exists(dir / "manifest.json.tmp-XyZ789"));
  EXPECT_TRUE(fs::exists(dir / "notes.tmp-kept"));
}

// The files still to write must fit the free space (estimated from sample 0's real size): a make
// that cannot finish is refused before it writes one image, with what it needs and what there is.
TEST(DatasetGenerator, NotEnoughFreeSpaceIsRefusedBeforeAnyImage) {
  const auto dir = fresh_scratch_dir("data_no_space");
  const auto spec = small_spec();
  data::MakeOptions small_disk;
  small_disk.free_space = [](const std::string&) {
    return std::make_optional(std::make_pair<std::int64_t, std::int64_t>(1000, 1000000));
  };
  try {
    data::make_dataset(dir.string(), spec, small_disk);
    FAIL() << "made a dataset that does not fit";
  } catch (const tipbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("need about"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1.0 kB"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / data::sample_path(spec, 0)));
  data::MakeOptions few_inodes;
  few_inodes.free_space = [](const std::string&) {
    return std::make_optional(std::make_pair<std::int64_t, std::int64_t>(std::int64_t{1} << 40, 3));
  };
  EXPECT_THROW(data::make_dataset(dir.string(), spec, few_inodes), tipbench::InputError);
}

// Progress while writing: the last call says every file is written.
TEST(DatasetGenerator, ProgressIsReportedUpToTheLastFile) {
  const auto dir = fresh_scratch_dir("data_progress");
  const auto spec = small_spec();
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  std::mutex mutex;
  data::MakeOptions options;
  options.progress = [&](std::int64_t done, std::int64_t total) {
    std::lock_guard<std::mutex> lock(mutex);
    calls.emplace_back(done, total);
  };
  data::make_dataset(dir.string(), spec, options);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), std::make_pair(spec.images, spec.images));
}

TEST(DatasetGenerator, AnotherSpecInTheSameDirectoryIsRefused) {
  const auto dir = fresh_scratch_dir("data_mismatch");
  data::make_dataset(dir.string(), small_spec());
  auto other = small_spec();
  other.images = 30;
  try {
    data::make_dataset(dir.string(), other);
    FAIL() << "expected InputError";
  } catch (const tipbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another spec"), std::string::npos) << e.what();
  }
  // Another tool's manifest.json is never overwritten.
  const auto foreign = fresh_scratch_dir("data_foreign");
  write_bytes(foreign / "manifest.json", R"({"format": "something-else", "files": []})");
  EXPECT_THROW(data::make_dataset(foreign.string(), small_spec()), tipbench::InputError);
  EXPECT_EQ(read_bytes(foreign / "manifest.json"), R"({"format": "something-else", "files": []})");
  auto bad = small_spec();
  bad.classes = 0;
  EXPECT_THROW(data::make_dataset(dir.string(), bad), std::invalid_argument);
}

TEST(DatasetCheck, NamesMissingDirectoryManifestAndFiles) {
  const auto dir = fresh_scratch_dir("data_check");
  EXPECT_FALSE(data::check_dataset((dir / "nope").string()).dir_exists);
  const auto empty = data::check_dataset(dir.string());
  EXPECT_TRUE(empty.dir_exists);
  EXPECT_FALSE(empty.manifest.has_value());
  EXPECT_NE(empty.manifest_error.find("manifest.json"), std::string::npos) << empty.manifest_error;
  data::make_dataset(dir.string(), small_spec());
  ::unlink((dir / data::sample_path(small_spec(), 0)).c_str());
  const auto check = data::check_dataset(dir.string());
  ASSERT_TRUE(check.manifest.has_value());
  EXPECT_EQ(check.absent, std::vector<std::string>{data::sample_path(small_spec(), 0)});
}

TEST(DatasetSpec, DefaultIsImageNetLikeAndCacheDirIsKeyedBySpec) {
  const data::DatasetSpec spec;
  EXPECT_EQ(spec.width, 500);
  EXPECT_EQ(spec.height, 375);
  EXPECT_LT(data::quick_dataset_spec().images, 1000);
  const std::string dir = data::default_dataset_dir(spec);
  EXPECT_NE(dir.find("tipbench/datasets/" + spec.slug()), std::string::npos) << dir;
  EXPECT_NE(data::default_dataset_dir(data::quick_dataset_spec()), dir);
}

TEST(Jpeg, RoundTripIsCloseAndTruncatedOrGarbageDataIsAnError) {
  // A smooth picture survives JPEG almost unchanged (the dataset's grain would not: it is there
  // to cost entropy).
  data::RgbImage image(64, 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) {
      auto* p = image.at(x, y);
      p[0] = static_cast<std::uint8_t>(x * 4);
      p[1] = static_cast<std::uint8_t>(y * 5);
      p[2] = 100;
    }
  const auto bytes = data::encode_jpeg(image, 95);
  data::RgbImage out;
  std::string error;
  ASSERT_TRUE(data::decode_jpeg(bytes, out, error)) << error;
  ASSERT_EQ(out.width, 64);
  ASSERT_EQ(out.height, 48);
  double diff = 0;
  for (std::size_t i = 0; i < out.pixels.size(); ++i) diff += std::abs(int(out.pixels[i]) - int(image.pixels[i]));
  EXPECT_LT(diff / out.pixels.size(), 2.0);
  // The generator's images decode at their size.
  const auto drawn = data::encode_jpeg(data::draw_sample(0, 1, 1, 4, 500, 375), 90);
  ASSERT_TRUE(data::decode_jpeg(drawn, out, error)) << error;
  EXPECT_EQ(out.width, 500);
  EXPECT_EQ(out.height, 375);

  // Cut in the entropy-coded data: libjpeg only warns and fills grey; that is an error here.
  const std::vector<std::uint8_t> truncated(drawn.begin(), drawn.begin() + drawn.size() / 2);
  EXPECT_FALSE(data::decode_jpeg(truncated, out, error));
  EXPECT_NE(error.find("corrupt JPEG data"), std::string::npos) << error;
  // Cut before the scan starts: a fatal libjpeg error.
  const std::vector<std::uint8_t> headless(bytes.begin(), bytes.begin() + 100);
  EXPECT_FALSE(data::decode_jpeg(headless, out, error));
  EXPECT_FALSE(error.empty());
  const std::vector<std::uint8_t> garbage(200, 0x42);
  EXPECT_FALSE(data::decode_jpeg(garbage, out, error));
  EXPECT_NE(error.find("Not a JPEG"), std::string::npos) << error;
  EXPECT_FALSE(data::decode_jpeg({}, out, error));
  EXPECT_THROW(data::encode_jpeg(image, 0), std::invalid_argument);
}

// inspect_jpeg, the GPU-decode path's check on the host, agrees with decode_jpeg on every kind of
// file: whole ones pass with their size, truncated, headless and garbage ones fail.
TEST(Jpeg, InspectReadsTheHeaderAndRefusesWhatDecodeRefuses) {
  const auto drawn = data::encode_jpeg(data::draw_sample(0, 1, 1, 4, 500, 375), 90);
  data::JpegHeader header;
  data::RgbImage out;
  std::string error;
  ASSERT_TRUE(data::inspect_jpeg(drawn, header, error)) << error;
  EXPECT_EQ(header.width, 500);
  EXPECT_EQ(header.height, 375);
  EXPECT_EQ(header.components, 3);
  // Bytes after the end-of-image marker: libjpeg never reads them; both accept the file.
  auto trailing = drawn;
  trailing.insert(trailing.end(), {0x00, 0x11, 0x22});
  EXPECT_TRUE(data::inspect_jpeg(trailing, header, error)) << error;
  EXPECT_TRUE(data::decode_jpeg(trailing, out, error)) << error;

  for (const std::size_t keep :
       {drawn.size() / 2, drawn.size() - 1, drawn.size() - 2, std::size_t{100}, std::size_t{2}}) {
    SCOPED_TRACE("first " + std::to_string(keep) + " bytes");
    const std::vector<std::uint8_t> cut(drawn.begin(), drawn.begin() + static_cast<std::ptrdiff_t>(keep));
    EXPECT_FALSE(data::inspect_jpeg(cut, header, error));
    EXPECT_FALSE(error.empty());
    EXPECT_FALSE(data::decode_jpeg(cut, out, error));
  }
  const std::vector<std::uint8_t> garbage(200, 0x42);
  EXPECT_FALSE(data::inspect_jpeg(garbage, header, error));
  EXPECT_NE(error.find("Not a JPEG"), std::string::npos) << error;
  EXPECT_FALSE(data::inspect_jpeg({}, header, error));
}

TEST(Augment, CropBoxesStayWithinTorchvisionsBounds) {
  data::AugmentOptions o;
  int flips = 0, fallbacks = 0;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    data::Rng rng = data::Rng::keyed({0, i});
    const auto box = data::random_resized_crop(500, 375, o, rng);
    ASSERT_GE(box.x, 0);
    ASSERT_GE(box.y, 0);
    ASSERT_LE(box.x + box.width, 500);
    ASSERT_LE(box.y + box.height, 375);
    const double area = double(box.width) * box.height / (500.0 * 375);
    const double ratio = double(box.width) / box.height;
    if (box.width == 500 && box.height == 375) {
      ++fallbacks;
    } else {
      // Rounding of w and h moves the drawn area and ratio a little.
      EXPECT_GE(area, 0.08 * 0.95);
      EXPECT_LE(area, 1.0);
      EXPECT_GE(ratio, 0.75 * 0.97);
      EXPECT_LE(ratio, 4.0 / 3 * 1.03);
    }
    flips += box.flip;
  }
  EXPECT_NEAR(flips / 2000.0, 0.5, 0.05);
  EXPECT_LT(fallbacks, 100);
  // An image far outside the ratio bounds falls back to the centre crop at the nearest ratio.
  data::Rng rng(1);
  o.scale_min = o.scale_max = 1.0;  // the whole 1000x100 image never fits a ratio <= 4/3
  const auto box = data::random_resized_crop(1000, 100, o, rng);
  EXPECT_EQ(box.height, 100);
  EXPECT_EQ(box.width, 133);
  EXPECT_EQ(box.x, (1000 - 133) / 2);
}

TEST(Augment, OutputHasTheShapeAndRangeOfNormalizedImages) {
  const auto bytes = data::encode_jpeg(data::draw_sample(3, 2, 2, 4, 500, 375), 90);
  data::RgbImage image;
  std::string error;
  ASSERT_TRUE(data::decode_jpeg(bytes, image, error)) << error;
  data::ResizeScratch scratch;
  for (int size : {224, 32}) {
    data::AugmentOptions o;
    o.output_size = size;
    const std::size_t n = 3 * std::size_t(size) * size;
    std::vector<float> out(n + 1, 1e9f);  // one sentinel past the end
    data::Rng rng(5);
    const auto box = data::random_resized_crop(image.width, image.height, o, rng);
    data::crop_resize_normalize(image, box, o, out.data(), scratch);
    EXPECT_EQ(out[n], 1e9f) << "wrote past 3 x size x size";
    for (int c = 0; c < 3; ++c) {
      const float lo = -o.mean[c] / o.std[c], hi = (1 - o.mean[c]) / o.std[c];
      float min = 1e9f, max = -1e9f;
      for (std::size_t i = c * n / 3; i < (c + 1) * n / 3; ++i) {
        min = std::min(min, out[i]);
        max = std::max(max, out[i]);
      }
      EXPECT_GE(min, lo - 1e-5f) << "channel " << c;
      EXPECT_LE(max, hi + 1e-5f) << "channel " << c;
      EXPECT_LT(min, max) << "channel " << c << " is flat";
    }
  }
}

TEST(Augment, FlipMirrorsAndAConstantImageStaysConstant) {
  data::RgbImage image(40, 30);
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 40; ++x) {
      auto* p = image.at(x, y);
      p[0] = static_cast<std::uint8_t>(x * 6);  // a horizontal ramp in red
      p[1] = 128;
      p[2] = 0;
    }
  data::AugmentOptions o;
  o.output_size = 20;
  data::ResizeScratch scratch;
  std::vector<float> plain(3 * 400), flipped(3 * 400);
  data::crop_resize_normalize(image, {0, 0, 40, 30, false}, o, plain.data(), scratch);
  data::crop_resize_normalize(image, {0, 0, 40, 30, true}, o, flipped.data(), scratch);
  for (int i = 0; i < 20; ++i)
    for (int j = 0; j < 20; ++j) {
      EXPECT_FLOAT_EQ(flipped[i * 20 + j], plain[i * 20 + (19 - j)]);
      EXPECT_NEAR(plain[400 + i * 20 + j], (128 / 255.0f - o.mean[1]) / o.std[1], 1e-4);  // green is constant
    }
  EXPECT_LT(plain[0], plain[19]);  // the ramp rises left to right
}

TEST(LoaderOptions, CorruptPolicyNames) {
  EXPECT_EQ(data::parse_corrupt_policy("skip"), data::CorruptPolicy::skip);
  EXPECT_EQ(data::parse_corrupt_policy("fail"), data::CorruptPolicy::fail);
  EXPECT_EQ(data::to_string(data::CorruptPolicy::fail), "fail");
  try {
    data::parse_corrupt_policy("ignore");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("skip, fail"), std::string::npos);
  }
  const data::LoaderOptions defaults;  // PyTorch's DataLoader defaults
  EXPECT_EQ(defaults.workers, 0);
  EXPECT_FALSE(defaults.pin_memory);
  EXPECT_EQ(defaults.prefetch_factor, 2);
}

}  // namespace
