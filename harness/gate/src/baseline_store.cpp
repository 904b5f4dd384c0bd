#include "tipbench/gate/baseline_store.h"

#include "tipbench/common/atomic_file.h"
#include "tipbench/common/error_text.h"
#include "tipbench/results/result.h"

#include <dirent.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tipbench::gate {

namespace {

// opendir/readdir rather than std::filesystem: the tipbench binary also loads libtorch.so,
// which exports its own copies of the std::filesystem functions.
std::vector<std::string> entries(const std::string& dir, bool directories) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.empty() || name[0] == '.') continue;
      struct stat st {};
      if (::stat((dir + "/" + name).c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode) == directories) names.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A stored file is filed under its run's slug, and that slug is its fingerprint's: why not.
std::optional<std::string> misfiled(const Result& r, const std::string& slug_dir) {
  if (r.context.fingerprint_slug != slug_dir) {
    return fmt::format("stored under {} but its slug is {}", slug_dir, abbreviated(r.context.fingerprint_slug));
  }
  return slug_identity_problem(r.context.fingerprint_slug, r.context.fingerprint);
}

StoredBaseline describe(const Result& r, const std::string& path, const std::string& slug, const std::string& name) {
  StoredBaseline b{
      path, slug, name, r.context.timestamp_utc, r.context.git.sha, r.context.device, {}, r.context.fingerprint, {}};
  for (const auto& s : r.suites) b.suites.push_back(s.name);
  b.model_sha256 = model_sha256_of(r);
  return b;
}

}  // namespace

bool is_safe_name(const std::string& name, std::size_t max) {
  if (name.empty() || name[0] == '.' || name.size() > max) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

std::optional<std::string> slug_problem(const std::string& slug) {
  if (is_safe_name(slug, kMaxSlugBytes)) return std::nullopt;
  return fmt::format(
      "'{}' is not a fingerprint slug: lower-case letters, digits, '.', '_' and '-', not starting "
      "with '.', at most {} bytes",
      abbreviated(slug), kMaxSlugBytes);
}

std::optional<std::string> store_dir_problem(const std::string& dir) {
  if (dir.empty()) return std::string("an empty path is no directory");
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return abbreviated(dir) + " is not a directory";
  return std::nullopt;
}

std::string save_baseline(const std::string& run_path, const std::string& dir, const std::string& name, bool force) {
  if (!is_safe_name(name)) {
    throw InputError(
        fmt::format("baseline name '{}': use lower-case letters, digits, '.', '_' and '-', at most {} bytes",
                    abbreviated(name), kMaxBaselineNameBytes));
  }
  const Result r = read_result(run_path);  // throws InputError on anything malformed
  if (r.context.settings.inject_slowdown_pct > 0 || !r.context.settings.inject_slowdown_op.empty()) {
    throw InputError(fmt::format("{}: made with --inject-slowdown {:g}{}: an injected run is never a baseline",
                                 run_path, r.context.settings.inject_slowdown_pct,
                                 r.context.settings.inject_slowdown_op.empty() ? "" : " --inject-slowdown-op"));
  }
  if (r.context.settings.inject_extra_ops > 0) {
    throw InputError(fmt::format("{}: made with --inject-extra-ops {}: an injected run is never a baseline", run_path,
                                 r.context.settings.inject_extra_ops));
  }
  if (r.context.settings.instructions == "callgrind") {
    throw InputError(
        fmt::format("{}: made with --instructions callgrind: its times are Callgrind's, not the machine's, so it is no "
                    "baseline of times (compare its counts with `gate --counts`)",
                    run_path));
  }
  const std::string& slug = r.context.fingerprint_slug;
  if (auto why = slug_problem(slug)) throw InputError(fmt::format("{}: {}", run_path, *why));
  if (auto why = slug_identity_problem(slug, r.context.fingerprint)) {
    throw InputError(fmt::format("{}: {}: it would be filed as another machine's baseline", run_path, *why));
  }
  if (r.suites.empty()) throw InputError(run_path + ": the run has no suites");
  const std::string path = dir + "/" + slug + "/" + name + ".json";
  const std::string exists_message = path + " exists: pass --force to replace it (or --name to store another)";
  if (exists(path) && !force) throw InputError(exists_message);  // before reading the run again
  try {
    // Without --force the rename itself refuses an existing file: of two saves of one name at
    // the same time, one wins and the other says so.
    write_file_atomically(path, read_all(run_path), force ? Replace::yes : Replace::no);
  } catch (const FileExistsError&) {
    throw InputError(exists_message);
  }
  return path;
}

std::vector<StoredBaseline> list_baselines(const std::string& dir, std::vector<std::string>* unreadable) {
  std::vector<StoredBaseline> out;
  for (const auto& slug : entries(dir, true)) {
    for (const auto& file : entries(dir + "/" + slug, false)) {
      if (file.size() <= 5 || file.substr(file.size() - 5) != ".json") continue;
      const std::string path = dir + "/" + slug + "/" + file;
      try {
        const Result r = read_result(path);
        if (auto why = misfiled(r, slug)) throw InputError(fmt::format("{}: {}", path, *why));
        out.push_back(describe(r, path, slug, file.substr(0, file.size() - 5)));
      } catch (const std::exception& e) {
        if (unreadable) unreadable->push_back(e.what());
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.slug != b.slug ? a.slug < b.slug : a.timestamp_utc < b.timestamp_utc;
  });
  return out;
}

namespace {

bool holds_every_suite(const StoredBaseline& b, const std::vector<std::string>& suites) {
  return std::all_of(suites.begin(), suites.end(), [&](const std::string& s) {
    return std::find(b.suites.begin(), b.suites.end(), s) != b.suites.end();
  });
}

// Whether b is a better choice than best: one that holds every suite first, then the newer.
bool better(const StoredBaseline& b, const std::optional<StoredBaseline>& best,
            const std::vector<std::string>& suites) {
  if (!best) return true;
  const bool b_holds = holds_every_suite(b, suites), best_holds = holds_every_suite(*best, suites);
  if (b_holds != best_holds) return b_holds;
  return b.timestamp_utc >= best->timestamp_utc;
}

bool of_model(const StoredBaseline& b, const std::optional<std::string>& model_sha256) {
  return !model_sha256 || b.model_sha256 == *model_sha256;
}

}  // namespace

std::string model_sha256_of(const Result& r) {
  return r.context.model_file.is_object() ? r.context.model_file.value("sha256", "") : "";
}

std::optional<StoredBaseline> find_baseline(const std::string& dir, const std::string& slug,
                                            const std::vector<std::string>& suites,
                                            const std::optional<std::string>& model_sha256) {
  if (auto why = slug_problem(slug)) throw InputError(*why);
  std::optional<StoredBaseline> best;
  const std::string slug_dir = dir + "/" + slug;
  for (const auto& file : entries(slug_dir, false)) {
    if (file.size() <= 5 || file.substr(file.size() - 5) != ".json") continue;
    const std::string path = slug_dir + "/" + file;
    StoredBaseline b;
    try {
      const Result r = read_result(path);
      if (auto why = misfiled(r, slug)) throw InputError(fmt::format("{}: {}", path, *why));
      b = describe(r, path, slug, file.substr(0, file.size() - 5));
    } catch (const InputError& e) {
      // A damaged baseline of this very fingerprint must not read as "none stored" (exit 3).
      throw InputError(
          fmt::format("a stored baseline for {} is unreadable: {} (restore it from git or remove it)", slug, e.what()));
    }
    if (of_model(b, model_sha256) && better(b, best, suites)) best = std::move(b);
  }
  return best;
}

std::optional<StoredBaseline> find_baseline_for_hardware(const std::string& dir, const Fingerprint& fingerprint,
                                                         const std::vector<std::string>& suites,
                                                         const std::optional<std::string>& model_sha256) {
  std::optional<StoredBaseline> best;
  for (auto& b : list_baselines(dir)) {
    if (!same_hardware(b.fingerprint, fingerprint) || !of_model(b, model_sha256)) continue;
    if (better(b, best, suites)) best = std::move(b);
  }
  return best;
}

}  // namespace tipbench::gate
