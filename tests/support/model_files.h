// The model files of the `run --model-file` tests, made once per test run by
// tests/models/make_model_files.py (with TIPBENCH_PYTHON, the real scripts/export_model.py) and
// cached under the scratch root in a folder named by a hash of both scripts, so editing either
// makes them again; made in a private folder renamed into place, so parallel test processes never read
// half a file. Needs TIPBENCH_PYTHON and TIPBENCH_SOURCE_DIR (test_paths.h). Example:
//   const ModelFiles& files = model_files();
//   if (!files.error.empty()) FAIL() << files.error;
//   run({"run", "--model-file", files.path("tiny.pt"), ...});
#pragma once

#include "child_process.h"
#include "scratch_dir.h"
#include "test_paths.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>

namespace tipbench::testing {

struct ModelFiles {
  std::filesystem::path dir;
  std::string error;  // why they could not be made ("" when they were)
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

inline const ModelFiles& model_files() {
  static ModelFiles files;
  static std::once_flag once;
  std::call_once(once, [] {
    namespace fs = std::filesystem;
    const fs::path script = fs::path(TIPBENCH_SOURCE_DIR) / "tests/models/make_model_files.py";
    const fs::path exporter = fs::path(TIPBENCH_SOURCE_DIR) / "scripts/export_model.py";
    std::ostringstream tag;
    tag << "model_files_" << std::hex << std::hash<std::string>{}(read_bytes(script) + read_bytes(exporter));
    files.dir = scratch_root() / tag.str();
    if (fs::exists(files.dir / "done")) return;
    const fs::path tmp = files.dir.string() + ".tmp-" + std::to_string(::getpid());
    remove_tree(tmp);
    const auto made = run_child({TIPBENCH_PYTHON, script.string(), TIPBENCH_SOURCE_DIR, tmp.string()},
                                tmp.string() + ".out", tmp.string() + ".err");
    if (made.code != 0 || !fs::exists(tmp / "done")) {
      files.error = "make_model_files.py exited " + std::to_string(made.code) + ": " + made.out + made.err;
    } else {
      std::error_code ec;
      fs::rename(tmp, files.dir, ec);  // fails harmlessly when another process got there first
    }
    remove_tree(tmp);
    fs::remove(tmp.string() + ".out");
    fs::remove(tmp.string() + ".err");
  });
  return files;
}

}  // namespace tipbench::testing
