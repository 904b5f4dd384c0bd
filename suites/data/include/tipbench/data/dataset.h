// An on-disk ImageFolder-style dataset of real JPEG files (DIR/class_07/img_000123.jpg) with a
// manifest (DIR/manifest.json: the spec, and per file its label, size and SHA-256). Made
// deterministically from a spec: the same spec gives the same files, byte for byte, with the
// same libjpeg-turbo. Making is idempotent: a complete dataset is reused, a partial one (an
// interrupted make, files deleted or changed) is detected and completed. Example:
//   DatasetSpec spec;  spec.images = 256;
//   MakeReport r = tipbench::data::make_dataset("/data/jpeg", spec);   // r.outcome == made
//   Manifest m = tipbench::data::read_manifest("/data/jpeg");          // m.files[17].path
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tipbench::data {

struct DatasetSpec {
  std::int64_t images = 2048;
  int width = 500;  // ImageNet-like: its photos are typically 500 x 375 or 500 x 333
  int height = 375;
  int classes = 10;
  std::uint64_t seed = 0;
  int quality = 90;  // JPEG quality

  // Throws std::invalid_argument naming the bad field and its valid range.
  void validate() const;
  // "n2048-500x375-k10-q90-s0": names the default cache directory of this spec.
  std::string slug() const;
  // "2048 images, 500x375, 10 classes, quality 90, seed 0"
  std::string describe() const;
  bool operator==(const DatasetSpec&) const = default;
};

// The dataset a --quick run uses: a few hundred images of the default size.
DatasetSpec quick_dataset_spec();

struct ManifestEntry {
  std::string path;  // relative to the dataset directory
  int label = 0;
  std::int64_t bytes = 0;
  std::string sha256;  // lowercase hex
};

struct Manifest {
  DatasetSpec spec;
  std::vector<ManifestEntry> files;  // in index order
  std::int64_t total_bytes() const;
};

inline constexpr const char* kManifestName = "manifest.json";

// Where image `index` lives (relative path) and its class: index % classes, so classes are balanced.
std::string sample_path(const DatasetSpec& spec, std::int64_t index);
int sample_label(const DatasetSpec& spec, std::int64_t index);

// Reads DIR/manifest.json. Throws tipbench::InputError naming the file when it is missing, not
// JSON, not a tipbench dataset manifest, or not one a run can use (a spec out of range, a file
// count other than spec.images, a label outside the classes, a number out of its type's range).
Manifest read_manifest(const std::string& dir);
nlohmann::json manifest_to_json(const Manifest& m);

enum class MakeOutcome {
  made,       // there was no dataset: every file written
  completed,  // a partial dataset was found and its missing or changed files rewritten
  reused,     // the dataset was complete: nothing written
};

struct MakeReport {
  MakeOutcome outcome = MakeOutcome::made;
  std::int64_t written = 0;  // image files (re)written
  std::string partial;       // what was incomplete ("no manifest.json", "3 of 256 files missing or changed")
  int stale_removed = 0;     // temporary files an interrupted make had left, removed
  double seconds = 0;
  Manifest manifest;
};

struct MakeOptions {
  bool verify_checksums = true;  // false: a listed file counts as present when its size matches
  int threads = 0;               // 0: one per available core
  // Called from a worker at most about once a second while files are written, and once when
  // the last is: images written so far (this make), of how many it writes.
  std::function<void(std::int64_t written, std::int64_t to_write)> progress;
  // Free bytes and inodes where DIR is; nullopt: unknown (the check is skipped). Default: statvfs.
  // Tests give a small disk.
  std::function<std::optional<std::pair<std::int64_t, std::int64_t>>(const std::string& dir)> free_space;
};

// Makes DIR (and its parents) into a complete dataset of `spec`. Concurrent makers of the same
// DIR serialise on a lock file; image files and the manifest are written atomically, so an
// interrupted make leaves a partial dataset that the next make completes, and the temporaries it
// left are removed. Before writing, the files still to write (their size estimated from sample
// 0, +10%) must fit the disk's free bytes and inodes. Throws InputError when DIR holds a dataset
// of another spec, cannot be written, or lacks the space (nothing written then).
MakeReport make_dataset(const std::string& dir, const DatasetSpec& spec, const MakeOptions& options = {});

// What a run can use: the directory exists and has a readable manifest. Files the manifest lists
// but the disk lacks (or has at another size) are named, not fatal: the loader counts them.
struct DatasetCheck {
  bool dir_exists = false;
  std::optional<Manifest> manifest;
  std::string manifest_error;       // why there is no manifest, when there is none
  std::vector<std::string> absent;  // listed files missing or of another size
};
DatasetCheck check_dataset(const std::string& dir);

// $XDG_CACHE_HOME/tipbench/datasets/<slug>, else $HOME/.cache/tipbench/datasets/<slug>, else
// /tmp/tipbench-<uid>/datasets/<slug>.
std::string default_dataset_dir(const DatasetSpec& spec);

}  // namespace tipbench::data
