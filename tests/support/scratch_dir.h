// Scratch files for tests: a fresh directory under TIPBENCH_TEST_DATA (set by ctest) or the system
// temp directory when a test binary is run by hand, plus small byte-level file helpers.
//   const auto dir = tipbench::testing::fresh_scratch_dir("result_roundtrip");
//   tipbench::testing::write_bytes(dir / "x.json", "{}");
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tipbench::testing {

namespace fs = std::filesystem;

// Removes a directory tree with unlink/rmdir. Not std::filesystem::remove_all: libtorch.so (2.11
// wheel) exports its own copy of the std::filesystem functions, and its remove_all segfaults on a
// non-empty directory when called from code built with the system libstdc++.
inline void remove_tree(const fs::path& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      const fs::path child = dir / name;
      struct stat st {};
      if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        ::chmod(child.c_str(), 0755);
        remove_tree(child);
      } else {
        ::unlink(child.c_str());
      }
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

inline fs::path scratch_root() {
  const char* env = std::getenv("TIPBENCH_TEST_DATA");
  return (env && *env) ? fs::path(env) : fs::temp_directory_path() / "tipbench_test_data";
}

// An empty directory of the test's own: removed first if a previous run left it behind.
inline fs::path fresh_scratch_dir(const std::string& leaf) {
  const fs::path dir = scratch_root() / leaf;
  remove_tree(dir);
  fs::create_directories(dir);
  return dir;
}

inline std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_bytes(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// The names in a directory (not recursive), sorted.
inline std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tipbench::testing
