// Writes a file so that readers see the old content or the new, never a part: temp file in the
// same directory, fsync, rename. An interrupted write leaves the old file untouched.
//   tipbench::write_file_atomically("results/x.json", text);
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tipbench {

// Whether a write may replace a file already at the path.
enum class Replace { yes, no };

// The write of Replace::no when a file is already there (it may have appeared since a check:
// two `baseline save`s of one name; exactly one of them wins).
struct FileExistsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Creates missing parent directories. Throws std::runtime_error with the path and errno text;
// FileExistsError with Replace::no when the path exists (renameat2's RENAME_NOREPLACE: the check
// and the rename are one step).
void write_file_atomically(const std::string& path, std::string_view content, Replace replace = Replace::yes);

// Fail fast, before any work: can `path` be written later? Creates missing parent directories
// (as the write would) and the very temporary file write_file_atomically makes (`path.tmp-XXXXXX`),
// removed again, so a name too long for the filesystem is found too. Returns why not ("is a
// directory", "File name too long", "Read-only file system", ...), or nullopt when it can.
std::optional<std::string> output_file_problem(const std::string& path);
// The same for a directory that files will be written into (created when missing).
std::optional<std::string> output_dir_problem(const std::string& dir);

}  // namespace tipbench
