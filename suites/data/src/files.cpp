#include "files.h"

#include "tipbench/results/result.h"  // InputError

#include <fcntl.h>
#include <sys/file.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace tipbench::data::detail {

std::int64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return st.st_size;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_directories(const std::string& path) {
  if (path.empty() || is_directory(path)) return;
  const auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    throw InputError(fmt::format("cannot create the directory {}: {}", path, std::strerror(errno)));
  }
  if (!is_directory(path)) throw InputError(fmt::format("cannot create the directory {}: a file is in the way", path));
}

bool read_file(const std::string& path, std::vector<std::uint8_t>& out, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return false;
  }
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;  // the file shrank since fstat: what was read is what there is
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return true;
}

void write_file_replacing(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::string temp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw InputError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      throw InputError(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    throw InputError(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
  }
}

namespace {

// "<name>.tmp-" followed by mkstemp's 6 characters.
bool is_temporary(const std::string& name) {
  constexpr std::string_view kMark = ".tmp-";
  return name.size() > kMark.size() + 6 && name.compare(name.size() - 6 - kMark.size(), kMark.size(), kMark) == 0;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

}  // namespace

int remove_stale_temporaries(const std::string& dir) {
  int removed = 0;
  std::vector<std::string> folders{dir};
  for (const auto& name : names_in(dir)) {
    if (name.rfind("class_", 0) == 0 && is_directory(dir + "/" + name)) folders.push_back(dir + "/" + name);
  }
  for (const auto& folder : folders) {
    for (const auto& name : names_in(folder)) {
      if (is_temporary(name) && ::unlink((folder + "/" + name).c_str()) == 0) ++removed;
    }
  }
  return removed;
}

std::optional<FreeSpace> free_space(const std::string& path) {
  std::string at = path.empty() ? "." : path;
  struct statvfs fs {};
  while (::statvfs(at.c_str(), &fs) != 0) {
    if (errno != ENOENT) return std::nullopt;
    const auto slash = at.find_last_of('/');
    if (slash == std::string::npos) {
      at = ".";
    } else if (slash == 0) {
      at = "/";
    } else {
      at = at.substr(0, slash);
    }
    if (at == "." || at == "/") {
      if (::statvfs(at.c_str(), &fs) != 0) return std::nullopt;
      break;
    }
  }
  return FreeSpace{static_cast<std::int64_t>(fs.f_bavail) * static_cast<std::int64_t>(fs.f_frsize),
                   static_cast<std::int64_t>(fs.f_favail)};
}

void sync_filesystem(const std::string& dir) {
  if (const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    ::syncfs(fd);
    ::close(fd);
  }
}

DirectoryLock::DirectoryLock(const std::string& dir) {
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int saved = errno;
      ::close(fd_);
      throw InputError(fmt::format("cannot lock {}: {}", path, std::strerror(saved)));
    }
  }
}

DirectoryLock::~DirectoryLock() { ::close(fd_); }  // closing releases the lock

}  // namespace tipbench::data::detail
