// Stored baselines: results/baselines/<fingerprint-slug>/<name>.json, committed to the repo. A
// baseline is looked up by the fingerprint slug of the run being gated (or, across software, by
// its hardware). Example:
//   auto path = tipbench::gate::save_baseline("results/runs/x.json", "results/baselines", "main", false);
//   auto b = tipbench::gate::find_baseline("results/baselines", result.context.fingerprint_slug);
#pragma once

#include "tipbench/environment/fingerprint.h"
#include "tipbench/results/result.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::gate {

struct StoredBaseline {
  std::string path;
  std::string slug;  // the directory name = the result's fingerprint slug
  std::string name;  // file name without .json
  std::string timestamp_utc;
  std::string git_sha;
  std::string device;
  std::vector<std::string> suites;
  Fingerprint fingerprint;
  std::string model_sha256;  // the run's model file (`run --model-file`), "" for the reference models
};

// The SHA-256 of the model file a result trained, "" when it trained the reference models.
std::string model_sha256_of(const Result& r);

// Validates the run (readable, schema, no injected slowdown, a safe slug that its fingerprint
// gives), then copies it byte for byte to <dir>/<slug>/<name>.json, atomically. An existing file
// is kept unless force.
// Throws InputError with the reason; returns the path written.
std::string save_baseline(const std::string& run_path, const std::string& dir, const std::string& name, bool force);

// Every readable baseline under dir, sorted by slug then timestamp. Unreadable files, and files
// whose slug is not their directory's or not their fingerprint's, are reported in `unreadable`
// (path: reason) instead of failing the listing.
std::vector<StoredBaseline> list_baselines(const std::string& dir, std::vector<std::string>* unreadable = nullptr);

// The newest (by the run's timestamp) baseline stored for this slug that holds every suite in
// `suites`; when none holds them all (or `suites` is empty), the newest. A GPU campaign stores one
// baseline per suite (each device call runs a few), so the newest file alone would gate a tf32 run
// against a cuda_graphs baseline. Throws InputError for a bad slug (slug_problem), and naming the
// file when one stored for this slug cannot be read (truncated, corrupt) or is not what its place
// says (slug_identity_problem): never "none stored".
// With model_sha256 (a run's model_sha256_of), only baselines of that very model qualify: results
// of two model versions never gate each other.
std::optional<StoredBaseline> find_baseline(const std::string& dir, const std::string& slug,
                                            const std::vector<std::string>& suites = {},
                                            const std::optional<std::string>& model_sha256 = std::nullopt);

// --across-software: the newest baseline of any slug whose hardware (GPUs, CPU) is this
// fingerprint's, whatever its software, preferring those that hold every suite in `suites` as
// find_baseline does; unreadable files are skipped (they cannot be matched).
std::optional<StoredBaseline> find_baseline_for_hardware(const std::string& dir, const Fingerprint& fingerprint,
                                                         const std::vector<std::string>& suites,
                                                         const std::optional<std::string>& model_sha256 = {});

inline constexpr std::size_t kMaxBaselineNameBytes = 100;
inline constexpr std::size_t kMaxSlugBytes = 200;
// Filesystem-safe: [a-z0-9._-], not empty, not starting with '.', at most `max` bytes (a baseline
// name becomes <name>.json plus a temporary suffix, within the 255 bytes a file name may have).
bool is_safe_name(const std::string& name, std::size_t max = kMaxBaselineNameBytes);

// Why `slug` cannot be a fingerprint slug (a directory of the store): empty, a character outside
// [a-z0-9._-] ("../../etc"), a leading '.', or longer than kMaxSlugBytes; nullopt when it can.
std::optional<std::string> slug_problem(const std::string& slug);

// Why `dir` cannot be a baseline store to read: "" or an existing non-directory; nullopt when it
// can (a missing directory is a store with nothing in it yet).
std::optional<std::string> store_dir_problem(const std::string& dir);

}  // namespace tipbench::gate
