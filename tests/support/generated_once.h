// Files a script makes for many tests (model files, torchvision's reference outputs), made once
// per build and reused by every test process: in a folder of the shared cache
// (TIPBENCH_TEST_CACHE, which ctest sets to one folder for the whole build; else the test's scratch
// root) named by a hash of the scripts, so editing a script makes them again. The first process
// makes them into a private folder renamed into place, holding a lock, so the others (ctest -j)
// wait for that one instead of making them too, and never read half a file.
//   const auto made = generated_once("model_files", read_bytes(script), [](const fs::path& tmp) {
//     return run_child({python, script, tmp.string()}, ...).code == 0 ? "" : "exited ...";
//   });
//   if (!made.error.empty()) FAIL() << made.error;   // else the files are in made.dir
#pragma once

#include "scratch_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

namespace tipbench::testing {

inline fs::path shared_cache_root() {
  const char* env = std::getenv("TIPBENCH_TEST_CACHE");
  return (env && *env) ? fs::path(env) : scratch_root();
}

struct Generated {
  fs::path dir;          // where the files are (with a `done` file the generator wrote last)
  std::string error;     // why they could not be made ("" when they were)
  bool skipped = false;  // the generator said it cannot run here (error says why)
};

// What a generator returns: "" when it made every file into the folder it was given (and `done`
// last), else the reason; a reason starting "skip: " means it cannot run here (a missing package).
using Generator = std::function<std::string(const fs::path& into)>;

inline Generated generated_once(const std::string& name, const std::string& inputs, const Generator& generate) {
  Generated out;
  std::ostringstream tag;
  tag << name << "_" << std::hex << std::hash<std::string>{}(inputs);
  const fs::path root = shared_cache_root();
  fs::create_directories(root);
  out.dir = root / tag.str();
  // One maker at a time; a process that waited finds the folder made.
  const std::string lock_path = out.dir.string() + ".lock";
  const int lock = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  if (!fs::exists(out.dir / "done")) {
    const fs::path tmp = out.dir.string() + ".tmp-" + std::to_string(::getpid());
    remove_tree(tmp);
    fs::create_directories(tmp);
    const std::string why = generate(tmp);
    if (why.rfind("skip: ", 0) == 0) {
      out.skipped = true;
      out.error = why.substr(6);
    } else if (!why.empty()) {
      out.error = why;
    } else if (!fs::exists(tmp / "done")) {
      out.error = name + ": the generator wrote no `done` file in " + tmp.string();
    } else {
      remove_tree(out.dir);  // a folder left half-made by a killed run
      std::error_code ec;
      fs::rename(tmp, out.dir, ec);
      if (ec) out.error = name + ": cannot move " + tmp.string() + " into place: " + ec.message();
    }
    remove_tree(tmp);
  }
  if (lock >= 0) ::close(lock);  // releases the lock
  return out;
}

}  // namespace tipbench::testing
