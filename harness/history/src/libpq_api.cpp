#include "libpq_api.h"

#include "tipbench/history/store.h"

#include <dlfcn.h>

#include <optional>

namespace tipbench::history {

namespace {

template <class F>
void bind(void* handle, const char* name, F& slot, std::string& missing) {
  slot = reinterpret_cast<F>(dlsym(handle, name));
  if (!slot && missing.empty()) missing = name;
}

// The library and every function, or why not.
struct Loaded {
  std::optional<LibPq> api;
  std::string why;
};

Loaded load() {
  void* handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    return {std::nullopt, std::string("the PostgreSQL client library could not be loaded (") + (e ? e : "libpq.so.5") +
                              "): install libpq5 (Debian, Ubuntu) or libpq (others)"};
  }
  LibPq api{};
  std::string missing;
  bind(handle, "PQclear", api.clear, missing);
  bind(handle, "PQconnectdbParams", api.connectdbParams, missing);
  bind(handle, "PQconninfoFree", api.conninfoFree, missing);
  bind(handle, "PQconninfoParse", api.conninfoParse, missing);
  bind(handle, "PQerrorMessage", api.errorMessage, missing);
  bind(handle, "PQexec", api.exec, missing);
  bind(handle, "PQexecParams", api.execParams, missing);
  bind(handle, "PQfinish", api.finish, missing);
  bind(handle, "PQgetisnull", api.getisnull, missing);
  bind(handle, "PQgetvalue", api.getvalue, missing);
  bind(handle, "PQntuples", api.ntuples, missing);
  bind(handle, "PQresultErrorField", api.resultErrorField, missing);
  bind(handle, "PQresultStatus", api.resultStatus, missing);
  bind(handle, "PQsetNoticeProcessor", api.setNoticeProcessor, missing);
  bind(handle, "PQstatus", api.status, missing);
  if (!missing.empty()) return {std::nullopt, "libpq.so.5 lacks " + missing + ": a libpq older than 10"};
  return {api, ""};
}

}  // namespace

const LibPq& libpq(const std::string& shown_url) {
  static const Loaded loaded = load();  // once; never unloaded (connections may outlive any scope)
  if (!loaded.api) throw StoreError(shown_url + ": " + loaded.why);
  return *loaded.api;
}

}  // namespace tipbench::history
