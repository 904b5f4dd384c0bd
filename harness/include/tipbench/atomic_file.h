// Writes a file so that readers see the old content or the new, never a part: temp file in the
// same directory, fsync, rename. An interrupted write leaves the old file untouched.
//   tipbench::write_file_atomically("results/x.json", text);
#pragma once

#include <string>
#include <string_view>

namespace tipbench {

// Creates missing parent directories. Throws std::runtime_error with the path and errno text.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace tipbench
