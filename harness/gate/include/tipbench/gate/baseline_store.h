// Stored baselines: results/baselines/<fingerprint-slug>/<name>.json, committed to the repo. A
// baseline is looked up by the fingerprint slug of the run being gated (or, across software, by
// its hardware). Example:
//   auto path = tipbench::gate::save_baseline("results/runs/x.json", "results/baselines", "main", false);
//   auto b = tipbench::gate::find_baseline("results/baselines", result.context.fingerprint_slug);
#pragma once

#include "tipbench/fingerprint.h"

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
};

// Validates the run (readable, schema, no injected slowdown, a safe slug), then copies it byte
// for byte to <dir>/<slug>/<name>.json, atomically. An existing file is kept unless force.
// Throws InputError with the reason; returns the path written.
std::string save_baseline(const std::string& run_path, const std::string& dir, const std::string& name,
                          bool force);

// Every readable baseline under dir, sorted by slug then timestamp. Unreadable files are
// reported in `unreadable` (path: reason) instead of failing the listing.
std::vector<StoredBaseline> list_baselines(const std::string& dir, std::vector<std::string>* unreadable = nullptr);

// The newest (by the run's timestamp) baseline stored for this slug. Throws InputError naming the
// file when one stored for this slug cannot be read (truncated, corrupt): never "none stored".
std::optional<StoredBaseline> find_baseline(const std::string& dir, const std::string& slug);

// --across-software: the newest baseline of any slug whose hardware (GPUs, CPU) is this
// fingerprint's, whatever its software; unreadable files are skipped (they cannot be matched).
std::optional<StoredBaseline> find_baseline_for_hardware(const std::string& dir, const Fingerprint& fingerprint);

// Filesystem-safe: [a-z0-9._-], not empty, not starting with '.'.
bool is_safe_name(const std::string& name);

}  // namespace tipbench::gate
