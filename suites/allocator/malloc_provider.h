// Which allocator serves malloc in this process, asked of the allocator itself rather than
// guessed from a file name: the library that defines the `malloc` the program calls (the first in
// the global scope: an LD_PRELOAD wins), and that library's own introspection, jemalloc's
// mallctl("version") or tcmalloc's tc_version, defined in that very library. A file merely
// named libjemalloc.so.2 that is something else does not pass. Example:
//   const MallocProvider p = malloc_provider();   // {"jemalloc", "/usr/lib/.../libjemalloc.so.2", "5.3.0-0-g54ea..."}
#pragma once

#include <string>

namespace tipbench::suites {

struct MallocProvider {
  std::string kind;     // "glibc", "jemalloc", "tcmalloc", or "unknown"
  std::string library;  // the file of the library that defines malloc (its real path)
  std::string version;  // as the allocator reports it ("" when it cannot)
};

MallocProvider malloc_provider();

}  // namespace tipbench::suites
