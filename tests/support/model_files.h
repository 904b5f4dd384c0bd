// The model files of the `run --model-file` tests, made once per build by
// tests/models/make_model_files.py (with TIPBENCH_PYTHON, the real scripts/export_model.py) and
// shared by every test process (generated_once.h: named by a hash of both scripts, so editing
// either makes them again). Needs TIPBENCH_PYTHON and TIPBENCH_SOURCE_DIR (test_paths.h). Example:
//   const ModelFiles& files = model_files();
//   if (!files.error.empty()) FAIL() << files.error;
//   run({"run", "--model-file", files.path("tiny.pt"), ...});
#pragma once

#include "child_process.h"
#include "generated_once.h"
#include "test_paths.h"

#include <filesystem>
#include <mutex>
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
    const auto made =
        generated_once("model_files", read_bytes(script) + read_bytes(exporter), [&](const fs::path& into) {
          const auto o = run_child({TIPBENCH_PYTHON, script.string(), TIPBENCH_SOURCE_DIR, into.string()},
                                   into.string() + ".out", into.string() + ".err");
          fs::remove(into.string() + ".out");
          fs::remove(into.string() + ".err");
          return o.code == 0 ? std::string()
                             : "make_model_files.py exited " + std::to_string(o.code) + ": " + o.out + o.err;
        });
    files.dir = made.dir;
    files.error = made.error;
  });
  return files;
}

}  // namespace tipbench::testing
