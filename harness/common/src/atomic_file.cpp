#include "tipbench/common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>  // renameat2, RENAME_NOREPLACE (glibc 2.28)
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace tipbench {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " '" + path + "': " + std::strerror(errno));
}

void write_all(int fd, std::string_view content, const std::string& path) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write", path);
    content.remove_prefix(static_cast<std::size_t>(n));
  }
}

// A file of our own in dir, created exclusively and removed: proves creating files there works.
std::optional<std::string> probe_dir(const std::string& dir) {
  std::string probe = (dir.empty() ? std::string(".") : dir) + "/.tipbench-probe-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return std::string(std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

std::optional<std::string> make_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return std::nullopt;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create directory '" + dir.string() + "': " + ec.message();
  return std::nullopt;
}

// rename() that fails with EEXIST when `to` exists, in one step. A filesystem without
// RENAME_NOREPLACE (EINVAL) gets link() + unlink(): link never replaces either.
bool rename_unless_exists(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
  if (::link(from.c_str(), to.c_str()) != 0) return false;
  ::unlink(from.c_str());
  return true;
}

}  // namespace

std::optional<std::string> output_dir_problem(const std::string& dir) {
  if (auto problem = make_dir(dir)) return problem;
  return probe_dir(dir);
}

std::optional<std::string> output_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return std::string("empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return std::string("is a directory");
  } else if (errno != ENOENT) {
    return std::string(std::strerror(errno));  // a name too long, a path through a file, no access
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    if (auto problem = make_dir(parent)) return problem;
  }
  // The very temporary file write_file_atomically will create (its name is the longest of the
  // write), made and removed: a name too long for the filesystem is found now, not at the end.
  std::string temp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return std::string(std::strerror(errno));
  ::close(fd);
  ::unlink(temp.c_str());
  return std::nullopt;
}

void write_file_atomically(const std::string& path, std::string_view content, Replace replace) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  // The temp file lives beside the target: rename is atomic only within one filesystem.
  std::string temp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail("cannot create a temporary file for", path);
  try {
    write_all(fd, content, temp);
    if (::fsync(fd) != 0) fail("cannot flush", temp);
    ::fchmod(fd, 0644);
    if (::close(fd) != 0) fail("cannot close", temp);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (replace == Replace::no) {
    if (rename_unless_exists(temp, path)) return;
    const int saved = errno;
    ::unlink(temp.c_str());
    if (saved == EEXIST) throw FileExistsError(path + " exists");
    errno = saved;
    fail("cannot rename the temporary file onto", path);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    errno = saved;
    fail("cannot rename the temporary file onto", path);
  }
}

}  // namespace tipbench
