#include "tipbench/data/dataset.h"

#include "files.h"
#include "tipbench/common/atomic_file.h"
#include "tipbench/data/draw.h"
#include "tipbench/data/jpeg.h"
#include "tipbench/data/system.h"
#include "tipbench/common/json_number.h"
#include "tipbench/results/result.h"  // InputError
#include "tipbench/common/sha256.h"

#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace tipbench::data {

namespace {

using namespace detail;

constexpr const char* kFormat = "tipbench-jpeg-dataset";
constexpr int kFormatVersion = 1;

int digits(std::int64_t n) { return n < 10 ? 1 : 1 + digits(n / 10); }

std::string join(const std::string& dir, const std::string& relative) { return dir + "/" + relative; }

// "class_07" of "class_07/img_000123.jpg".
std::string class_dir_of(const std::string& relative) { return relative.substr(0, relative.find('/')); }

nlohmann::ordered_json spec_to_json(const DatasetSpec& s) {
  return {{"images", s.images},   {"width", s.width},     {"height", s.height},
          {"classes", s.classes}, {"quality", s.quality}, {"seed", s.seed}};
}

DatasetSpec spec_from_json(const nlohmann::json& j) {
  DatasetSpec s;
  s.images = json_integer<std::int64_t>(j, "images");
  s.width = json_integer<int>(j, "width");
  s.height = json_integer<int>(j, "height");
  s.classes = json_integer<int>(j, "classes");
  s.quality = json_integer<int>(j, "quality");
  s.seed = json_integer<std::uint64_t>(j, "seed");
  return s;
}

// A manifest.json that parses but is not ours: another tool's file, never to be overwritten.
bool foreign_manifest(const std::string& path) {
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && !(j.contains("format") && j.at("format") == kFormat);  // any "format" but ours
}

ManifestEntry make_entry(const DatasetSpec& spec, std::int64_t index, const std::vector<std::uint8_t>& bytes) {
  return {sample_path(spec, index), sample_label(spec, index), static_cast<std::int64_t>(bytes.size()),
          sha256_hex(bytes)};
}

// Whether the file `entry` names is on disk as listed (its size; its checksum when asked).
bool entry_intact(const std::string& dir, const ManifestEntry& entry, bool verify_checksum) {
  const std::string path = join(dir, entry.path);
  if (file_size(path) != entry.bytes) return false;
  if (!verify_checksum) return true;
  std::vector<std::uint8_t> bytes;
  std::string error;
  return read_file(path, bytes, error) && sha256_hex(bytes) == entry.sha256;
}

// Runs body(i) for i in [0, n) on `threads` threads; rethrows the first exception.
template <typename Body>
void parallel_for(std::int64_t n, int threads, Body&& body) {
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (std::int64_t i; (i = next.fetch_add(1)) < n;) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(n);  // stop handing out work
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

void DatasetSpec::validate() const {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  require(images >= 1 && images <= 10'000'000, fmt::format("images must be in 1..10000000 (got {})", images));
  require(width >= 16 && width <= 8192 && height >= 16 && height <= 8192,
          fmt::format("width and height must be in 16..8192 (got {}x{})", width, height));
  require(classes >= 1 && classes <= 1000, fmt::format("classes must be in 1..1000 (got {})", classes));
  require(quality >= 1 && quality <= 100, fmt::format("quality must be in 1..100 (got {})", quality));
}

std::string DatasetSpec::slug() const {
  return fmt::format("n{}-{}x{}-k{}-q{}-s{}", images, width, height, classes, quality, seed);
}

std::string DatasetSpec::describe() const {
  return fmt::format("{} images, {}x{}, {} classes, quality {}, seed {}", images, width, height, classes, quality,
                     seed);
}

DatasetSpec quick_dataset_spec() {
  DatasetSpec s;
  s.images = 256;
  return s;
}

std::int64_t Manifest::total_bytes() const {
  std::int64_t total = 0;
  for (const auto& f : files) total += f.bytes;
  return total;
}

std::string sample_path(const DatasetSpec& spec, std::int64_t index) {
  const int class_digits = std::max(2, digits(spec.classes - 1));
  const int index_digits = std::max(6, digits(spec.images - 1));
  return fmt::format("class_{:0{}}/img_{:0{}}.jpg", sample_label(spec, index), class_digits, index, index_digits);
}

int sample_label(const DatasetSpec& spec, std::int64_t index) { return static_cast<int>(index % spec.classes); }

nlohmann::json manifest_to_json(const Manifest& m) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& f : m.files) {
    files.push_back({{"path", f.path}, {"label", f.label}, {"bytes", f.bytes}, {"sha256", f.sha256}});
  }
  nlohmann::ordered_json j = {{"format", kFormat},
                              {"version", kFormatVersion},
                              {"spec", spec_to_json(m.spec)},
                              {"total_bytes", m.total_bytes()},
                              {"files", files}};
  return nlohmann::json::parse(j.dump());
}

// Every value a run relies on is checked here, so a manifest that reads is one a run can use: a
// spec in range (classes sizes the model's output), exactly spec.images files (the dataloader
// suite checks the batch against spec.images; the loader indexes the files), labels of the
// spec's classes and sizes that are not negative and add up without overflow.
Manifest read_manifest(const std::string& dir) {
  const std::string path = join(dir, kManifestName);
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  try {
    const auto j = nlohmann::json::parse(in);
    if (j.value("format", "") != kFormat) throw InputError(fmt::format("{}: not a tipbench dataset manifest", path));
    if (const int version = json_integer<int>(j, "version"); version != kFormatVersion) {
      throw InputError(fmt::format("{}: manifest version {} (this tipbench reads {})", path, version, kFormatVersion));
    }
    Manifest m;
    m.spec = spec_from_json(j.at("spec"));
    m.spec.validate();
    std::int64_t total_bytes = 0;  // Manifest::total_bytes() must not overflow
    for (const auto& f : j.at("files")) {
      m.files.push_back({f.at("path").get<std::string>(), json_integer<int>(f, "label"),
                         json_integer<std::int64_t>(f, "bytes"), f.at("sha256").get<std::string>()});
      const auto& entry = m.files.back();
      if (entry.label < 0 || entry.label >= m.spec.classes) {
        throw InputError(
            fmt::format("{}: label {} of {} is outside 0..{}", path, entry.label, entry.path, m.spec.classes - 1));
      }
      if (entry.bytes < 0 || entry.bytes > std::numeric_limits<std::int64_t>::max() - total_bytes) {
        throw InputError(fmt::format("{}: {} has a size of {} bytes: negative, or the sizes overflow their sum", path,
                                     entry.path, entry.bytes));
      }
      total_bytes += entry.bytes;
    }
    if (static_cast<std::int64_t>(m.files.size()) != m.spec.images) {
      throw InputError(
          fmt::format("{}: lists {} files for a dataset of {} images", path, m.files.size(), m.spec.images));
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed manifest: {}", path, e.what()));
  } catch (const std::logic_error& e) {  // json_integer's range errors, DatasetSpec::validate
    throw InputError(fmt::format("{}: malformed manifest: {}", path, e.what()));
  }
}

namespace {

// Files the old manifest lists that are on disk at their listed size (a cheap look: the make's
// own check also verifies their checksums). The others are what this make writes.
std::int64_t listed_present(const std::string& dir, const DatasetSpec& spec, const std::optional<Manifest>& old) {
  if (!old) return 0;
  std::int64_t present = 0;
  for (std::int64_t i = 0; i < spec.images; ++i) {
    const auto& listed = old->files[static_cast<std::size_t>(i)];
    if (file_size(join(dir, listed.path)) == listed.bytes) ++present;
  }
  return present;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000 && u < 5) bytes /= 1000, ++u;
  return u == 0 ? fmt::format("{:.0f} {}", bytes, units[u]) : fmt::format("{:.1f} {}", bytes, units[u]);
}

// The files still to write must fit: their size estimated from sample 0 (the very bytes the make
// writes for it, in about a millisecond), +10% for the variation between images.
void check_free_space(const std::string& dir, const DatasetSpec& spec, const std::optional<Manifest>& old,
                      const MakeOptions& options) {
  const std::int64_t to_write = spec.images - listed_present(dir, spec, old);
  if (to_write <= 0) return;
  std::optional<std::pair<std::int64_t, std::int64_t>> free;
  if (options.free_space) {
    free = options.free_space(dir);
  } else if (const auto f = free_space(dir)) {
    free = std::make_pair(f->bytes, f->inodes);
  }
  if (!free) return;
  const RgbImage sample = draw_sample(spec.seed, 0, sample_label(spec, 0), spec.classes, spec.width, spec.height);
  const double per_image = 1.10 * static_cast<double>(encode_jpeg(sample, spec.quality).size());
  const double need = per_image * static_cast<double>(to_write);
  if (need > static_cast<double>(free->first) || to_write > free->second) {
    throw InputError(
        fmt::format("{} images of {}x{} need about {} and {} files; {} has {} and {} files free: "
                    "free space, or ask for fewer images (--images) or smaller ones (--size)",
                    to_write, spec.width, spec.height, human_bytes(need), to_write, dir,
                    human_bytes(static_cast<double>(free->first)), free->second));
  }
}

// MakeOptions::progress, called by one worker at a time, at most about once a second.
class ProgressReporter {
 public:
  ProgressReporter(std::function<void(std::int64_t, std::int64_t)> report, std::int64_t total)
      : report_(std::move(report)), total_(total), next_(Clock::now() + kPeriod) {}
  void maybe_report(std::int64_t written) {
    if (!report_ || Clock::now() < next_.load()) return;
    std::unique_lock<std::mutex> one(mutex_, std::try_to_lock);
    if (!one.owns_lock()) return;
    next_ = Clock::now() + kPeriod;
    report_(written, total_);
  }
  void finish(std::int64_t written) {
    if (report_ && written > 0) report_(written, total_);
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kPeriod{1};
  std::function<void(std::int64_t, std::int64_t)> report_;
  std::int64_t total_;
  std::atomic<Clock::time_point> next_;
  std::mutex mutex_;
};

}  // namespace

MakeReport make_dataset(const std::string& dir, const DatasetSpec& spec, const MakeOptions& options) {
  spec.validate();
  const auto started = std::chrono::steady_clock::now();
  make_directories(dir);
  DirectoryLock lock(dir);

  MakeReport report;
  report.stale_removed = remove_stale_temporaries(dir);  // an interrupted make's, under the lock
  std::optional<Manifest> old;
  if (file_size(join(dir, kManifestName)) >= 0) {
    if (foreign_manifest(join(dir, kManifestName))) {
      throw InputError(
          fmt::format("{}/{} is not a tipbench dataset manifest: choose another directory", dir, kManifestName));
    }
    try {
      old = read_manifest(dir);
    } catch (const InputError& e) {
      report.partial = fmt::format("unreadable manifest ({})", e.what());
    }
    if (old && old->spec != spec) {
      throw InputError(fmt::format(
          "{} holds a dataset of another spec ({}; asked for {}): choose another directory, or delete it first", dir,
          old->spec.describe(), spec.describe()));
    }
  } else if (is_directory(join(dir, class_dir_of(sample_path(spec, 0))))) {
    report.partial = "no manifest.json (an interrupted make?)";
  }

  check_free_space(dir, spec, old, options);
  for (std::int64_t i = 0; i < std::min<std::int64_t>(spec.images, spec.classes); ++i) {
    make_directories(join(dir, class_dir_of(sample_path(spec, i))));
  }

  Manifest manifest;
  manifest.spec = spec;
  manifest.files.resize(static_cast<std::size_t>(spec.images));
  std::atomic<std::int64_t> written{0};
  ProgressReporter progress(options.progress, spec.images - listed_present(dir, spec, old));
  const int threads = options.threads > 0 ? options.threads : available_cores();
  parallel_for(spec.images, std::max(1, std::min<int>(threads, static_cast<int>(spec.images))), [&](std::int64_t i) {
    auto& slot = manifest.files[static_cast<std::size_t>(i)];
    if (old) {
      const auto& listed = old->files[static_cast<std::size_t>(i)];
      if (listed.path == sample_path(spec, i) && entry_intact(dir, listed, options.verify_checksums)) {
        slot = listed;
        return;
      }
    }
    const RgbImage image = draw_sample(spec.seed, i, sample_label(spec, i), spec.classes, spec.width, spec.height);
    const auto bytes = encode_jpeg(image, spec.quality);
    slot = make_entry(spec, i, bytes);
    write_file_replacing(join(dir, slot.path), bytes);
    progress.maybe_report(written.fetch_add(1) + 1);
  });
  progress.finish(written.load());

  report.written = written.load();
  if (old && report.written == 0) {
    report.outcome = MakeOutcome::reused;
  } else {
    if (old) report.partial = fmt::format("{} of {} files missing or changed", report.written, spec.images);
    report.outcome = report.partial.empty() ? MakeOutcome::made : MakeOutcome::completed;
    sync_filesystem(dir);  // the images reach the disk before the manifest that vouches for them
    write_file_atomically(join(dir, kManifestName), manifest_to_json(manifest).dump(1));
  }
  report.manifest = std::move(manifest);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

DatasetCheck check_dataset(const std::string& dir) {
  DatasetCheck check;
  check.dir_exists = is_directory(dir);
  if (!check.dir_exists) return check;
  try {
    check.manifest = read_manifest(dir);
  } catch (const InputError& e) {
    check.manifest_error = e.what();
    return check;
  }
  for (const auto& f : check.manifest->files) {
    if (file_size(join(dir, f.path)) != f.bytes) check.absent.push_back(f.path);
  }
  return check;
}

std::string default_dataset_dir(const DatasetSpec& spec) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string base;
  if (xdg && xdg[0] == '/') {
    base = std::string(xdg) + "/tipbench";
  } else if (home && home[0] == '/') {
    base = std::string(home) + "/.cache/tipbench";
  } else {
    base = fmt::format("/tmp/tipbench-{}", ::getuid());
  }
  return base + "/datasets/" + spec.slug();
}

}  // namespace tipbench::data
