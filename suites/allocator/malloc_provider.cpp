#include "malloc_provider.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdlib>

namespace tipbench::suites {

namespace {

// The loaded object that defines `symbol` in the global scope (its base address), or null.
const void* object_of(void* symbol) {
  Dl_info info{};
  return symbol != nullptr && ::dladdr(symbol, &info) != 0 ? info.dli_fbase : nullptr;
}

// `name`, looked up in the global scope, when the object that defines malloc defines it too.
void* beside_malloc(const char* name, const void* malloc_object) {
  void* symbol = ::dlsym(RTLD_DEFAULT, name);
  return object_of(symbol) == malloc_object ? symbol : nullptr;
}

std::string real_path(const char* path) {
  char resolved[PATH_MAX];
  return ::realpath(path, resolved) != nullptr ? std::string(resolved) : std::string(path);
}

}  // namespace

MallocProvider malloc_provider() {
  MallocProvider p{"unknown", "", ""};
  void* malloc_symbol = ::dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info{};
  if (malloc_symbol == nullptr || ::dladdr(malloc_symbol, &info) == 0) return p;
  p.library = real_path(info.dli_fname);
  const void* object = info.dli_fbase;
  // jemalloc: int mallctl(const char* name, void* old, size_t* oldlen, void* new, size_t newlen)
  using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  if (auto* mallctl = reinterpret_cast<Mallctl>(beside_malloc("mallctl", object))) {
    const char* version = nullptr;
    std::size_t length = sizeof(version);
    if (mallctl("version", &version, &length, nullptr, 0) == 0 && version != nullptr) {
      return {"jemalloc", p.library, version};
    }
  }
  // tcmalloc (gperftools): const char* tc_version(int* major, int* minor, const char** patch)
  using TcVersion = const char* (*)(int*, int*, const char**);
  if (auto* tc_version = reinterpret_cast<TcVersion>(beside_malloc("tc_version", object))) {
    int major = 0, minor = 0;
    const char* patch = nullptr;
    const char* version = tc_version(&major, &minor, &patch);
    return {"tcmalloc", p.library, version != nullptr ? version : ""};
  }
  // glibc: malloc from the object that defines gnu_get_libc_version.
  if (object_of(reinterpret_cast<void*>(&::gnu_get_libc_version)) == object) {
    return {"glibc", p.library, ::gnu_get_libc_version()};
  }
  return p;
}

}  // namespace tipbench::suites
