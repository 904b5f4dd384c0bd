// Internal to the data pipeline: the file operations the dataset maker and the loader share,
// on POSIX calls (libtorch.so exports its own std::filesystem functions, whose remove_all is
// broken; nothing here needs more than stat, open, read, write and rename).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::data::detail {

// Size of a regular file, or -1 when there is none.
std::int64_t file_size(const std::string& path);
bool is_directory(const std::string& path);
// mkdir -p; throws InputError naming the directory.
void make_directories(const std::string& path);
// The whole file into `out` (its buffer is reused); false with `error` set when it cannot be read.
bool read_file(const std::string& path, std::vector<std::uint8_t>& out, std::string& error);
// Temp file beside the target, then rename: a reader sees the whole file or none. No fsync (see
// sync_filesystem). Throws InputError naming the file.
void write_file_replacing(const std::string& path, const std::vector<std::uint8_t>& bytes);
// Flushes the filesystem holding `dir` (syncfs): one call instead of an fsync per file.
void sync_filesystem(const std::string& dir);
// Removes the temporaries an interrupted write_file_replacing (or write_file_atomically) left in
// `dir` and its class_* folders: names ending in ".tmp-" and mkstemp's 6 characters. Only while
// the directory lock is held, when no other maker writes there. Returns how many it removed.
int remove_stale_temporaries(const std::string& dir);
// Free bytes and free inodes for an unprivileged writer on the filesystem of `path` (or of its
// nearest existing ancestor); nullopt when statvfs cannot tell.
struct FreeSpace {
  std::int64_t bytes = 0;
  std::int64_t inodes = 0;
};
std::optional<FreeSpace> free_space(const std::string& path);

// An exclusive lock on DIR/.lock for the lifetime of the object: two makers of one directory
// (two test binaries, two runs on first use) take turns; the second then finds it complete.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace tipbench::data::detail
